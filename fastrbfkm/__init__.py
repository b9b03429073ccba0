"""fastrbfkm: K-Means as the zero-temperature limit of an RBF network.

Numba-jitted kernels for squared distances, softmax and exact Entmax-1.5
responsibilities, the free energy and its gradient, and the fused (soft)
Lloyd step; the RBFKMeans estimator with deterministic annealing.
"""

from .annealing import AnnealPath, anneal, critical_temperature
from .estimator import RBFKMeans
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

__version__ = "0.1.0"

__all__ = [
    "AnnealPath",
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
