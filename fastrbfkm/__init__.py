"""fastrbfkm: K-Means as the zero-temperature limit of an RBF network.

Numba-jitted kernels for squared distances, softmax and exact Entmax-1.5
responsibilities, the free energy and its gradient, and the fused (soft)
Lloyd step.
"""

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

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "entmax15",
    "entmax15_backward",
    "gradient",
    "objective",
    "responsibilities",
    "softmax",
    "softmax_backward",
    "squared_distances",
    "step",
    "sufficient_statistics",
]
