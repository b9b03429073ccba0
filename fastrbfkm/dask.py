"""Dask backend: the rows source over a ``dask.array.Array``'s row chunks.

Every pass of the fit over X (:mod:`fastrbfkm._rows`) is a map over X's row
chunks followed by a reduction of small, k x d-sized partials: each chunk's
task runs the same numba block function ``PASSES[name].block`` on the chunk
(with its global row offset and its chunk of the weights), and the partials
are combined pairwise, adjacent chunks first, in a tree whose shape depends
only on the number of chunks. The centers go into each pass's graph once, as
one key that every chunk's task depends on; only the partials come back.
Nothing gathers X: the fit persists X's chunks where they are computed (in
this process with the threaded scheduler, on the workers with a
``dask.distributed`` client) and releases them when the fit ends. For new
data (predictions), the per-row results are lazy dask arrays mapped over X's
chunks, each chunk's values checked when it is computed.

Everything runs on the scheduler the user has set: the threaded default, or
the client of ``dask.distributed`` made current by ``Client(...)``. Results
do not depend on it: the same chunks give the same bits, whichever worker
runs which task and however often a lost chunk is recomputed.

This module imports dask; ``import fastrbfkm`` does not import it.
"""

from __future__ import annotations

import sys
import threading

import dask
import dask.array as da
import numba
import numpy as np
from dask.delayed import delayed

from . import _kernels as K
from ._rows import PASSES, BlockRows
from ._threads import one_blas_thread
from ._tunables import FAN_IN
from ._validation import (
    as_float_array,
    check_sample_weight,
    check_value_range,
    check_weight_range,
    float_dtype,
)

__all__ = ["DaskRows", "check_array", "check_weights", "make_rows"]

#: Unit weights (the kernels' convention: an empty weight vector).
_UNIT = np.empty(0)

#: One kernel call at a time in a process: each call already uses every core
#: it is given, and numba's workqueue threading layer must not be entered by
#: two threads at once.
_KERNEL_LOCK = threading.Lock()


# ------------------------------------------------------------- validation


def check_array(X, name: str = "X") -> da.Array:
    """Check a dask array's metadata, lazily (nothing is computed).

    Returns X with float32 kept and any other real dtype cast to float64,
    after checking that it is 2-D and non-empty, with known chunk sizes and
    all features in one chunk. Values (NaN, inf, magnitude) are checked per
    chunk inside the first pass that reads them.
    """
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array; got {X.ndim}-D with shape {X.shape}.")
    float_dtype(X, name)  # raises for complex and non-numeric dtypes
    target = np.dtype(np.float32 if X.dtype == np.float32 else np.float64)
    if any(np.isnan(size) for size in X.shape):
        raise ValueError(
            f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first."
        )
    if X.shape[0] == 0:
        raise ValueError(f"{name} must have at least one row; got shape {X.shape}.")
    if X.shape[1] == 0:
        raise ValueError(f"{name} must have at least one column; got shape {X.shape}.")
    if len(X.chunks[1]) > 1:
        raise ValueError(
            f"{name} must be chunked along its rows only, with all {X.shape[1]} features in "
            f"one chunk; got {len(X.chunks[1])} chunks along the features {X.chunks[1]}. "
            f"Rechunk it with {name}.rechunk({{1: -1}})."
        )
    return X.astype(target) if X.dtype != target else X


def check_weights(sample_weight, X: da.Array) -> tuple[da.Array | None, float]:
    """Weights chunked like X's rows (None for unit weights) and their sum.

    numpy weights are checked at once; dask weights with one small
    computation of their minimum, maximum and sum (not a pass over X).
    """
    n = X.shape[0]
    if sample_weight is None:
        return None, float(n)
    if not isinstance(sample_weight, da.Array):
        w = check_sample_weight(sample_weight, n)
        return da.from_array(w, chunks=(X.chunks[0],)), float(w.sum())
    w = sample_weight
    if w.ndim != 1:
        raise ValueError(f"sample_weight must be a 1-D array; got {w.ndim}-D with shape {w.shape}.")
    float_dtype(w, "sample_weight")
    if w.shape[0] != n:
        raise ValueError(f"sample_weight must have one entry per row of X ({n}); got {w.shape[0]}.")
    w = w.astype(np.float64).rechunk((X.chunks[0],))
    lo, hi, total = dask.compute(w.min(), w.max(), w.sum())
    check_value_range(float(lo), float(hi), "sample_weight", np.dtype(np.float64), w, False)
    check_weight_range(float(lo), float(total))
    return w, float(total)


# ------------------------------------------------------------------ tasks


def _worker_threads() -> int | None:
    """Threads of the dask.distributed worker running this task, else None."""
    if "distributed" not in sys.modules:
        return None
    from distributed import get_worker

    try:
        return int(get_worker().state.nthreads)
    except ValueError:  # not on a worker
        return None


def _on_kernels(func, *args):
    """``func(*args)`` as the only kernel call in this process, with BLAS on
    one thread and, on a worker, at most as many numba threads as the worker
    has (numba's thread count is per calling thread: nothing else changes)."""
    threads = _worker_threads()
    with _KERNEL_LOCK:
        if threads is None:
            return one_blas_thread(func)(*args)
        previous = numba.get_num_threads()
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
        try:
            return one_blas_thread(func)(*args)
        finally:
            numba.set_num_threads(previous)


def _chunk(X: np.ndarray, check: bool, fitting: bool = False) -> np.ndarray:
    X = np.ascontiguousarray(X)
    if check and X.shape[0]:  # a chunk may be empty (after filtering rows, say)
        as_float_array(X, "X", dtype=X.dtype, coordinates=True, fitting=fitting)
    return X


def _block_task(name: str, check: bool, fitting: bool, X, w, offset: int, *args):
    X = _chunk(X, check, fitting)
    return _on_kernels(PASSES[name].block, X, np.ascontiguousarray(w), offset, *args)


def _combine_task(name: str, *parts):
    """Combine the partials in order, adjacent pairs first (a fixed shape)."""
    combine = PASSES[name].combine
    parts = list(parts)
    while len(parts) > 1:
        paired = [combine(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = paired + parts[len(paired) * 2 :]
    return parts[0]


def _tree(name: str, parts: list):
    """Combine the chunks' partials in a tree of tasks, ``FAN_IN`` adjacent
    partials a task: its shape depends on the number of chunks only, so the
    result does too (not on which worker runs which task, or when)."""
    while len(parts) > 1:
        parts = [
            delayed(_combine_task, pure=False)(name, *parts[i : i + FAN_IN])
            for i in range(0, len(parts), FAN_IN)
        ]
    return parts[0]


def _labels_task(X, C, check):
    return _on_kernels(K.hard_assign, _chunk(X, check), C, _UNIT, False)[0]


def _proba_task(X, C, sigma, mode):
    return _on_kernels(K.responsibilities, _chunk(X, True), C, sigma, mode)


def _squared_distances_task(X, C):
    return _on_kernels(K.squared_distances, _chunk(X, True), C)


def _distances_task(X, C):
    return np.sqrt(_squared_distances_task(X, C))


# ------------------------------------------------------------------ source


class DaskRows(BlockRows):
    """A rows source over a dask array's row chunks.

    Parameters
    ----------
    X : dask.array.Array
        Data checked by :func:`check_array`.
    w : dask.array.Array or None
        Weights chunked like X's rows (:func:`check_weights`); None: unit weights.
    weight : float
        Total weight.
    persist : bool, default=True
        Persist X's (and w's) chunks at the first pass, so that the passes do
        not recompute them from X's graph each time. A single pass (``score``)
        does not need it.
    """

    def __init__(self, X: da.Array, w: da.Array | None, weight: float, *, persist: bool = True):
        self.source = X
        self.X, self.w = X, w
        self._persist = persist  # at the first pass: nothing is computed before
        self._fitting = persist  # the data of a fit (checked as such)
        self.n, self.d = X.shape
        self.dtype = X.dtype
        self.weight = float(weight)
        sizes = np.asarray(X.chunks[0], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self._checked = False

    def reduce(self, name: str, *args):
        if self._persist:
            self.X, self.w = self.X.persist(), None if self.w is None else self.w.persist()
            self._persist = False
        step = PASSES[name]
        blocks = self.X.to_delayed(optimize_graph=False).ravel()
        weights = (
            self.w.to_delayed(optimize_graph=False).ravel()
            if self.w is not None
            else [_UNIT] * len(blocks)
        )
        # Arrays (the centers) become one key each, sent once per pass.
        shared = [delayed(a) if isinstance(a, np.ndarray) else a for a in args]
        check = not self._checked  # the first pass checks the values of every chunk
        parts = [
            delayed(_block_task, pure=False)(name, check, self._fitting, X, w, int(offset), *shared)
            for X, w, offset in zip(blocks, weights, self.offsets, strict=True)
        ]
        (partial,) = dask.compute(_tree(name, parts), optimize_graph=False)
        self._checked = True
        return step.finish(partial)

    def assign(self, C: np.ndarray):
        """``(labels, inertia, counts)``; the labels are a lazy dask array
        mapped over X's chunks (not over the persisted copy, which the fit
        releases)."""
        inertia, counts = self.inertia(C)
        return self._labels(C, check=False), inertia, counts

    def batch(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """One chunk, drawn uniformly, computed and checked (``m`` is not
        used: a mini-batch fit over a dask array takes one chunk a batch)."""
        i = int(rng.integers(0, len(self.offsets)))
        rows = _chunk(self.X.blocks[i].compute(), check=True, fitting=self._fitting)
        weights = np.empty(0) if self.w is None else np.asarray(self.w.blocks[i].compute())
        return rows, weights

    # New data: lazy per-row results over X's chunks, checked when computed.

    def _labels(self, C: np.ndarray, check: bool) -> da.Array:
        return self.source.map_blocks(
            _labels_task,
            delayed(C),
            check,
            drop_axis=1,
            dtype=np.int32,
            meta=np.empty((0,), dtype=np.int32),
        )

    def _per_row(self, task, C: np.ndarray, *args) -> da.Array:
        X = self.source
        return X.map_blocks(
            task,
            delayed(C),
            *args,
            chunks=(X.chunks[0], (C.shape[0],)),
            dtype=X.dtype,
            meta=np.empty((0, 0), dtype=X.dtype),
        )

    def labels(self, C: np.ndarray) -> da.Array:
        """Lazy nearest-center labels (int32) of X's rows."""
        return self._labels(C, check=True)

    def squared_distances(self, C: np.ndarray) -> da.Array:
        """Lazy ``(n, k)`` squared distances to the centers in X's dtype."""
        return self._per_row(_squared_distances_task, C)

    def distances(self, C: np.ndarray) -> da.Array:
        """Lazy ``(n, k)`` Euclidean distances to the centers in X's dtype."""
        return self._per_row(_distances_task, C)

    def responsibilities(self, C: np.ndarray, sigma: float, mode: int) -> da.Array:
        """Lazy ``(n, k)`` responsibilities in X's dtype."""
        return self._per_row(_proba_task, C, sigma, mode)

    def total_inertia(self, C: np.ndarray) -> float:
        """Weighted K-Means inertia of X at C, computed in one pass."""
        return self.inertia(C)[0]


def make_rows(X: da.Array, sample_weight, *, persist: bool = True) -> DaskRows:
    """A :class:`DaskRows` for X checked by :func:`check_array`."""
    w, weight = check_weights(sample_weight, X)
    return DaskRows(X, w, weight, persist=persist)
