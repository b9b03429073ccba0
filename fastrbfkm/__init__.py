"""fastrbfkm: K-Means as the zero-temperature limit of an RBF network.

Numba-jitted kernels for squared distances, softmax and exact Entmax-1.5
responsibilities, the free energy and its gradient, and the fused (soft)
Lloyd step; the RBFKMeans estimator with deterministic annealing, and
MiniBatchRBFKMeans, annealed over mini-batches.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING

#: Where each public name lives. They are imported at first use, so
#: that ``import fastrbfkm`` and ``python -m fastrbfkm --help`` do not load
#: numba, scikit-learn and the kernels until something needs them.
_PUBLIC = {
    "AnnealPath": "annealing",
    "anneal": "annealing",
    "critical_temperature": "annealing",
    "RBFKMeans": "estimator",
    "MiniBatchRBFKMeans": "minibatch",
    "entmax15": "objective",
    "entmax15_backward": "objective",
    "gradient": "objective",
    "objective": "objective",
    "responsibilities": "objective",
    "softmax": "objective",
    "softmax_backward": "objective",
    "squared_distances": "objective",
    "step": "objective",
    "sufficient_statistics": "objective",
    "kmeans_plusplus": "seeding",
}

#: Submodules a user imports by name (optional dependencies: torch, dask, cuda).
_SUBMODULES = ("cuda", "dask", "datasets", "paper", "torch")

if TYPE_CHECKING:
    from .annealing import AnnealPath, anneal, critical_temperature
    from .estimator import RBFKMeans
    from .minibatch import MiniBatchRBFKMeans
    from .objective import (
        entmax15,
        entmax15_backward,
        gradient,
        objective,
        responsibilities,
        softmax,
        softmax_backward,
        squared_distances,
        step,
        sufficient_statistics,
    )
    from .seeding import kmeans_plusplus


class _Package(types.ModuleType):
    """The package's module object: a public name is looked up in its
    submodule, imported at first use. (A module ``__getattr__`` would not do:
    importing the submodule ``objective`` sets the package's attribute
    ``objective`` to that module, which would then hide the function.)"""

    def __getattribute__(self, name: str):
        where = _PUBLIC.get(name)
        if where is not None:
            return getattr(importlib.import_module(f"{__name__}.{where}"), name)
        return super().__getattribute__(name)

    def __dir__(self) -> list[str]:
        """The public names and the public submodules, as ``import *`` and a
        user's tab completion should see them (not the helpers imported here)."""
        return sorted(set(__all__) | set(_SUBMODULES))


sys.modules[__name__].__class__ = _Package

__version__ = "0.1.0"

__all__ = [
    "AnnealPath",
    "MiniBatchRBFKMeans",
    "RBFKMeans",
    "__version__",
    "anneal",
    "critical_temperature",
    "entmax15",
    "entmax15_backward",
    "gradient",
    "kmeans_plusplus",
    "objective",
    "responsibilities",
    "softmax",
    "softmax_backward",
    "squared_distances",
    "step",
    "sufficient_statistics",
]
