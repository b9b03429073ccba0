"""Numba CPU kernels: pure functions on validated, C-contiguous float arrays.

Nothing here validates its input; the public functions in
:mod:`fastrbfkm.objective` do that once, at the boundary.
"""

from .assignment import (
    ENTMAX15,
    HARD,
    SOFTMAX,
    assign_logits,
    hard_assign,
    removal_costs,
    responsibilities,
)
from .distances import squared_distances
from .entmax import entmax15_backward
from .scatter import center_scatter
from .seeding import kmeans_plusplus
from .softmax import softmax_backward
from .update import (
    INERTIA,
    N_SUMMARY,
    OBJECTIVE,
    OFF_WINNER_MAX,
    SOFT,
    SUPPORT,
    SUPPORT_MAX,
    block_stats,
    label_stats,
    reconstruct,
)

__all__ = [
    "ENTMAX15",
    "HARD",
    "INERTIA",
    "N_SUMMARY",
    "OBJECTIVE",
    "OFF_WINNER_MAX",
    "SOFT",
    "SOFTMAX",
    "SUPPORT",
    "SUPPORT_MAX",
    "assign_logits",
    "block_stats",
    "center_scatter",
    "entmax15_backward",
    "hard_assign",
    "kmeans_plusplus",
    "label_stats",
    "reconstruct",
    "removal_costs",
    "responsibilities",
    "softmax_backward",
    "squared_distances",
]
