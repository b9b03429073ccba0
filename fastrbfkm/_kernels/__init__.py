"""Numba CPU kernels: pure functions on validated, C-contiguous float arrays.

Nothing here validates its input; the public functions in
:mod:`fastrbfkm.objective` do that once, at the boundary.
"""

from . import assignment, distances, entmax, scatter, seeding, softmax, update
from .assignment import ENTMAX15, HARD, SOFTMAX
from .threads import serial_when_small
from .transfers import transfer_sweeps
from .update import (
    INERTIA,
    N_SUMMARY,
    OBJECTIVE,
    OFF_WINNER_MAX,
    SOFT,
    SUPPORT,
    SUPPORT_MAX,
)


# The parallel kernels, each run on one thread when its call is small
# (:mod:`.threads`); ``size`` gives (rows, multiply-adds per row).
def _rows_by_centers(X, C, *_):
    return X.shape[0], C.shape[0] * (X.shape[1] + 1)


def _rows_by_columns(R, *_):
    return R.shape[0], 4 * R.shape[1]


hard_assign = serial_when_small(_rows_by_centers)(assignment.hard_assign)
responsibilities = serial_when_small(_rows_by_centers)(assignment.responsibilities)
removal_costs = serial_when_small(_rows_by_centers)(assignment.removal_costs)
assign_logits = serial_when_small(_rows_by_columns)(assignment.assign_logits)
squared_distances = serial_when_small(_rows_by_centers)(distances.squared_distances)
block_stats = serial_when_small(_rows_by_centers)(update.block_stats)
stats_and_reconstruction = serial_when_small(_rows_by_centers)(update.stats_and_reconstruction)
center_scatter = serial_when_small(
    lambda X, C, w, sigma, mode, chosen: (
        X.shape[0],
        C.shape[0] * (X.shape[1] + 1) + chosen.shape[0] * X.shape[1] ** 2,
    )
)(scatter.center_scatter)
entmax15_backward = serial_when_small(_rows_by_columns)(entmax.entmax15_backward)
softmax_backward = serial_when_small(_rows_by_columns)(softmax.softmax_backward)
kmeans_plusplus = serial_when_small(
    lambda X, w, k, uniforms: (X.shape[0], uniforms.shape[1] * X.shape[1])
)(seeding.kmeans_plusplus)

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
    "removal_costs",
    "responsibilities",
    "softmax_backward",
    "squared_distances",
    "stats_and_reconstruction",
    "transfer_sweeps",
]
