"""Device arrays at the public boundary: recognizing them, viewing them
without a copy, validating them on the device, moving the small ones.

Inputs may be numpy arrays (validated on the host as on the CPU path, then
copied once) or CUDA arrays: numba device arrays, or any object with the
``__cuda_array_interface__`` (CuPy arrays, PyTorch CUDA tensors), viewed in
place as a numba device array. Device data must already be float32 or
float64; NaN, infinity and magnitudes whose squares would overflow are
detected by a reduction on the device, which sends back four numbers.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._validation import as_float_array, check_sample_weight, check_value_range
from . import reduce
from .config import ROW_THREADS, SIMULATOR, SPAN, cdiv


def is_device_array(obj) -> bool:
    """Whether ``obj`` lives on the GPU (the simulator's fake device arrays too)."""
    if SIMULATOR:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return isinstance(obj, FakeCUDAArray)
    return cuda.is_cuda_array(obj)


def as_device(obj):
    """A numba device array over the same memory (no copy)."""
    if SIMULATOR or cuda.devicearray.is_cuda_ndarray(obj):
        return obj
    return cuda.as_cuda_array(obj)


def value_ranges(A) -> tuple[float, float, float, float]:
    """``(min, max, non-finite count, sum)`` of a device array, in float64."""
    n = A.shape[0]
    parts = cuda.device_array((cdiv(n, SPAN), 4), dtype=np.float64)
    kernel = reduce.ranges if A.ndim == 2 else reduce.ranges_1d
    kernel[cdiv(parts.shape[0], ROW_THREADS), ROW_THREADS](A, parts)
    ops = cuda.to_device(np.array([reduce.MIN, reduce.MAX, reduce.SUM, reduce.SUM], np.int32))
    while parts.shape[0] > 1:
        B = parts.shape[0]
        out = cuda.device_array((cdiv(B, SPAN), 4), dtype=np.float64)
        reduce.fold[(1, cdiv(B, SPAN)), ROW_THREADS](parts, ops, out)
        parts = out
    lo, hi, bad, total = parts.copy_to_host()[0]
    return float(lo), float(hi), float(bad), float(total)


def check_device_array(
    obj, name: str, *, ndim: int = 2, coordinates: bool = False, fitting: bool = False
):
    """Validate a CUDA array as :func:`fastrbfkm._validation.as_float_array`
    does a host one, on the device; return it as a numba device array."""
    A = as_device(obj)
    if A.ndim != ndim:
        raise ValueError(
            f"{name} must be a {ndim}-D array; got {A.ndim}-D with shape {tuple(A.shape)}."
        )
    dtype = np.dtype(A.dtype)
    if dtype not in (np.float32, np.float64):
        raise TypeError(
            f"{name} is a CUDA array of dtype {dtype}; on the GPU fastrbfkm takes float32 "
            "or float64 data: convert it on the device first."
        )
    if A.shape[0] == 0:
        raise ValueError(f"{name} must have at least one row; got shape {tuple(A.shape)}.")
    if ndim == 2 and A.shape[1] == 0:
        raise ValueError(f"{name} must have at least one column; got shape {tuple(A.shape)}.")
    lo, hi, bad, _ = value_ranges(A)
    if bad:
        raise ValueError(f"{name} contains NaN or infinity.")
    check_value_range(lo, hi, name, dtype, A, coordinates, fitting)
    return A


def device_data(X, name: str = "X", fitting: bool = False):
    """``(X_device, on_host)``: validated data on the device, and whether it
    came from the host (then results go back to the host too)."""
    if is_device_array(X):
        return check_device_array(X, name, coordinates=True, fitting=fitting), False
    return cuda.to_device(as_float_array(X, name, coordinates=True, fitting=fitting)), True


def device_logits(Z, name: str = "Z"):
    """``(Z_device, shape, on_host)`` for 1-D or 2-D logits (rows over the last axis)."""
    if is_device_array(Z):
        Z = as_device(Z)
        shape = tuple(Z.shape)
        if Z.ndim == 1:
            Z = Z.reshape(1, Z.shape[0])
        return check_device_array(Z, name), shape, False
    host = as_float_array(Z, name, ndim=(1, 2))
    return cuda.to_device(host.reshape(-1, host.shape[-1])), host.shape, True


def host_centers(C, X, name: str = "C") -> np.ndarray:
    """Validated host centers in X's dtype (device centers are copied: they are small)."""
    if is_device_array(C):
        C = as_device(C).copy_to_host()
    C = as_float_array(C, name, dtype=np.dtype(X.dtype), coordinates=True)
    if C.shape[1] != X.shape[1]:
        raise ValueError(
            f"{name} must have as many columns as X: X has {X.shape[1]} features, "
            f"{name} has {C.shape[1]}."
        )
    return C


def device_weights(sample_weight, n: int):
    """Validated weights on the device (float64 from the host, float32 or
    float64 on the device), or an empty array for unit weights."""
    if sample_weight is None:
        return cuda.device_array(0, dtype=np.float64)
    if not is_device_array(sample_weight):
        return cuda.to_device(check_sample_weight(sample_weight, n))
    w = check_device_array(sample_weight, "sample_weight", ndim=1)
    if w.shape[0] != n:
        raise ValueError(f"sample_weight must have one entry per row of X ({n}); got {w.shape[0]}.")
    lo, _, _, total = value_ranges(w)
    if lo < 0:
        raise ValueError("sample_weight must be non-negative.")
    if not total > 0:
        raise ValueError("sample_weight must have a positive sum; the weights are all zero.")
    return w
