"""The functional API on the GPU: what :mod:`fastrbfkm.objective` calls for
``backend="cuda"``.

Inputs are validated (numpy on the host, CUDA arrays on the device), the
data goes to the device once per call (CUDA arrays are used in place), and
results come back the way the data came: numpy arrays for numpy input,
numba device arrays for CUDA input (wrap them with ``cupy.asarray`` or
``torch.as_tensor(..., device="cuda")``; both read the CUDA array interface
without a copy). Sums and scalars are always host values.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import cuda

from . import arrays, passes, require
from .config import TILE, cdiv
from .distances import square_root
from .passes import Workspace

__all__ = [
    "assign_logits",
    "distances",
    "nearest",
    "require",
    "responsibilities",
    "squared_distances",
    "statistics",
]


def squared_distances(X, C):
    """``(n, k)`` squared distances, in X's dtype, where X came from."""
    Xd, on_host = arrays.device_data(X)
    out = passes.squared_distances(Xd, arrays.host_centers(C, Xd), Workspace())
    return arrays.to_caller(out, on_host)


def distances(X, C):
    """``(n, k)`` Euclidean distances, in X's dtype, where X came from."""
    Xd, on_host = arrays.device_data(X)
    out = passes.squared_distances(Xd, arrays.host_centers(C, Xd), Workspace())
    square_root[cdiv(out.shape[0], TILE), TILE](out)
    return arrays.to_caller(out, on_host)


def nearest(X, C, sample_weight=None) -> tuple[object, float]:
    """``(labels, inertia)``: the nearest center of every row (int32, ties
    to the lowest index; numpy for host X, a device array for CUDA X) and
    the weighted inertia."""
    Xd, on_host = arrays.device_data(X)
    Cn = arrays.host_centers(C, Xd)
    w = arrays.device_weights(sample_weight, Xd.shape[0])
    labels, _, inertia = passes.hard_assign(Xd, Cn, w, Workspace())
    labels = labels.copy_to_host() if on_host else labels
    return labels, inertia


def responsibilities(X, C, sigma: float, mode: int):
    """``(n, k)`` responsibilities, in X's dtype, where X came from."""
    Xd, on_host = arrays.device_data(X)
    out = passes.responsibilities(Xd, arrays.host_centers(C, Xd), sigma, mode, Workspace())
    return arrays.to_caller(out, on_host)


def assign_logits(Z, mode: int):
    """Row-wise softmax or entmax15 of logits over the last axis, where Z came from."""
    Zd, shape, on_host = arrays.device_logits(Z)
    return arrays.to_caller(passes.assign_logits(Zd, mode), on_host, shape)


def statistics(
    X, C, sigma: float, mode: int, sample_weight, with_stats: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Callable]:
    """``(N, S, summary, C, out)``: the fused pass's float64 host results,
    the validated host centers (X's dtype), and ``out``, which returns a
    small host result where X came from (itself, or a device copy)."""
    Xd, on_host = arrays.device_data(X)
    Cn = arrays.host_centers(C, Xd)
    w = arrays.device_weights(sample_weight, Xd.shape[0])
    N, S, summary = passes.block_stats(Xd, Cn, w, sigma, mode, Workspace(), with_stats)
    return N, S, summary, Cn, (_same if on_host else cuda.to_device)


def _same(array: np.ndarray) -> np.ndarray:
    return array
