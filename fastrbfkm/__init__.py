"""fastrbfkm: K-Means as the zero-temperature limit of an RBF network.

Numba-jitted kernels for squared distances, softmax and exact Entmax-1.5
responsibilities, the free energy and its gradient, and the fused (soft)
Lloyd step; the RBFKMeans estimator with deterministic annealing, and
MiniBatchRBFKMeans, annealed over mini-batches.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING

# loaded with the package: under an address-space limit nothing may be left to load it with
from ._memory import import_failure, loading_failure

# the release this source will be (fastrbfkm/_version.py, its one source)
from ._version import VERSION as __version__

#: Where each public name lives. They are imported at first use, so
#: that ``import fastrbfkm`` and ``python -m fastrbfkm --help`` do not load
#: numba, scikit-learn and the kernels until something needs them.
_PUBLIC = {
    "AnnealPath": "annealing",
    "anneal": "annealing",
    "critical_temperature": "annealing",
    "RBFKMeans": "estimator",
    "MiniBatchRBFKMeans": "minibatch",
    "entmax15": "functional",
    "entmax15_backward": "functional",
    "gradient": "functional",
    "objective": "functional",
    "responsibilities": "functional",
    "softmax": "functional",
    "softmax_backward": "functional",
    "squared_distances": "functional",
    "step": "functional",
    "sufficient_statistics": "functional",
    "kmeans_plusplus": "seeding",
    "PhaseDiagram": "phases",
    "Split": "phases",
    "distinct_clusters": "phases",
    "phase_diagram": "phases",
}

#: Submodules a user imports by name (optional dependencies: torch, cuda,
#: matplotlib), all in the API reference. (``fastrbfkm.dask`` is the rows
#: source behind dask input, used through the estimators and functions.)
_SUBMODULES = ("cuda", "datasets", "functional", "paper", "plotting", "torch")

if TYPE_CHECKING:
    from .annealing import AnnealPath, anneal, critical_temperature
    from .estimator import RBFKMeans
    from .functional import (
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
    from .minibatch import MiniBatchRBFKMeans
    from .phases import PhaseDiagram, Split, distinct_clusters, phase_diagram
    from .seeding import kmeans_plusplus


def __getattr__(name: str):
    """A public name, looked up in its submodule, imported at first use
    (under an address-space limit that leaves no room for numba, scipy and
    their shared libraries, a ``MemoryError`` that says so, raised before
    trying where the room is short: :mod:`fastrbfkm._memory`)."""
    where = _PUBLIC.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name = f"{__name__}.{where}"
    if module_name not in sys.modules and (error := loading_failure(module_name)) is not None:
        raise error
    try:
        module = importlib.import_module(module_name)
    except (ImportError, OSError, SystemError, MemoryError) as exc:
        error = import_failure(module_name, exc)
        if error is None:
            raise
        raise error from exc
    return getattr(module, name)


def __dir__() -> list[str]:
    """The public names and the public submodules, as ``import *`` and a
    user's tab completion should see them (not the helpers imported here)."""
    return sorted(set(__all__) | set(_SUBMODULES))


__all__ = [
    "AnnealPath",
    "MiniBatchRBFKMeans",
    "PhaseDiagram",
    "RBFKMeans",
    "Split",
    "__version__",
    "anneal",
    "critical_temperature",
    "distinct_clusters",
    "entmax15",
    "entmax15_backward",
    "gradient",
    "kmeans_plusplus",
    "objective",
    "phase_diagram",
    "responsibilities",
    "softmax",
    "softmax_backward",
    "squared_distances",
    "step",
    "sufficient_statistics",
]
