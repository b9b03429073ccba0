"""Where the work runs: ``backend="cpu"``, ``"cuda"`` or ``"auto"``.

- ``"cpu"``: the numba CPU kernels. CUDA arrays are refused (no silent copy
  to the host).
- ``"cuda"``: the numba.cuda kernels of :mod:`fastrbfkm.cuda`; a
  RuntimeError says what is missing when no GPU can be used (under
  ``NUMBA_ENABLE_CUDASIM=1`` they run on numba's CUDA simulator, for tests).
- ``"auto"``: the GPU for CUDA array input; for host data, the GPU only when
  a real one is available and one pass over the data costs at least
  :data:`AUTO_MIN_WORK` multiply-adds (``n * d * k``), enough for the
  work to outweigh copying X once; else the CPU. Smaller data never imports
  numba.cuda.

This module itself never imports numba.cuda: ``fastrbfkm.cuda`` is imported
only when the GPU is asked for, or when numba.cuda is already loaded and an
input might be one of its device arrays.
"""

from __future__ import annotations

import functools
import sys
from types import ModuleType

import numpy as np

from ._dispatch import is_dask_array, lazy_input, make_rows
from ._rows import InMemoryRows, Rows
from ._validation import check_centers, check_data, check_sample_weight

BACKENDS = ("auto", "cpu", "cuda")

#: Multiply-adds of one pass (n * d * k) from which "auto" sends host data
#: to a GPU: a few milliseconds of a 2-core CPU, about what copying such a
#: matrix to the device and starting the kernels costs. Not yet tuned on a GPU.
AUTO_MIN_WORK = 1 << 26


def check_backend(backend) -> str:
    """``backend`` must be one of ``"auto"``, ``"cpu"``, ``"cuda"``."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {list(BACKENDS)}; got {backend!r}.")
    return backend


def is_device_array(obj) -> bool:
    """Whether ``obj`` is a CUDA array (CUDA array interface, or a numba
    device array, the simulator's included)."""
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    if "numba.cuda" not in sys.modules:
        return False  # no numba device array can exist
    from .cuda.arrays import is_device_array as on_device

    return on_device(obj)


@functools.cache
def gpu_available() -> bool:
    """Whether a real CUDA GPU is usable (imports numba.cuda; cached)."""
    try:
        from . import cuda
    except ImportError:
        return False
    return cuda.is_available()


def cuda_api() -> ModuleType:
    """:mod:`fastrbfkm.cuda.api`, or a RuntimeError saying why the GPU cannot run."""
    try:
        from .cuda import api
    except ImportError as exc:
        raise RuntimeError(
            f"backend='cuda' needs numba.cuda: pip install 'fastrbfkm[cuda]' ({exc})."
        ) from exc
    api.require()
    return api


def shape_of(array) -> tuple[int, ...]:
    """The shape of an array-like without converting it (``()`` if unknown)."""
    shape = getattr(array, "shape", None)
    if shape is not None:
        return tuple(int(s) for s in shape)
    try:
        return np.shape(array)
    except ValueError:  # ragged: validation will say so
        return ()


def choose(backend, X, work: int | None) -> str:
    """``"cpu"`` or ``"cuda"`` for data X and a pass of ``work`` multiply-adds
    (None: host data stays on the CPU under ``"auto"``)."""
    backend = check_backend(backend)
    device = is_device_array(X)
    if backend == "cpu":
        if device:
            raise ValueError(
                "X is a CUDA array but backend='cpu': use backend='cuda' or 'auto', "
                "or copy X to the host first."
            )
        return "cpu"
    if backend == "cuda":
        cuda_api()
        return "cuda"
    if device:
        return "cuda"
    if work is None or work < AUTO_MIN_WORK:
        return "cpu"
    return "cuda" if gpu_available() else "cpu"


def device_api(backend, X, C=None, logits: bool = False) -> ModuleType | None:
    """:mod:`fastrbfkm.cuda.api` when the work on X (and centers C) goes to
    the GPU, else None. Logits (``logits=True``) are cheap per byte: host
    logits stay on the CPU under ``"auto"``."""
    work = None
    if not logits:
        shape_x, shape_c = shape_of(X), shape_of(C)
        if len(shape_x) == 2 and len(shape_c) == 2:
            work = shape_x[0] * shape_x[1] * shape_c[0]
    return cuda_api() if choose(backend, X, work) == "cuda" else None


def rows_for(X, C, sample_weight, backend) -> tuple[Rows, np.ndarray]:
    """``(rows, C)``: the validated data as a rows source on the chosen
    backend (:class:`~fastrbfkm._rows.InMemoryRows`, a streamed file or dask
    chunks on the CPU (:mod:`fastrbfkm._dispatch`), or the GPU's
    ``DeviceRows``), and the validated centers C in its dtype (on the host)."""
    lazy = lazy_input(X)  # a dask array or a memory-mapped file to stream
    if lazy is not None:
        if check_backend(backend) == "cuda" and is_dask_array(lazy):
            raise ValueError("backend='cuda' does not take dask arrays.")
        if is_dask_array(lazy) or choose(backend, lazy, None) == "cpu":
            return make_rows(lazy, sample_weight), check_centers(C, lazy)
    shape_x, shape_c = shape_of(X), shape_of(C)
    work = None
    if len(shape_x) == 2 and len(shape_c) == 2:
        work = shape_x[0] * shape_x[1] * shape_c[0]
    if choose(backend, X, work) == "cuda":
        from .cuda.arrays import host_centers
        from .cuda.rows import DeviceRows

        rows = DeviceRows.from_input(X, sample_weight)
        return rows, host_centers(C, rows.X)
    X, C = check_data(X, C)
    return InMemoryRows(X, check_sample_weight(sample_weight, X.shape[0])), C
