"""Final reductions on the GPU, in a fixed order.

Partial results (one row per block or segment) are reduced by levels: at
each level one thread folds ``SPAN`` consecutive rows of one column in
order, until one row is left. The tree depends only on the number of
partials, so the result is the same on every device and every run.
"""

from __future__ import annotations

import math

import numba
from numba import cuda

from .config import ROW_THREADS, SPAN

#: How :func:`fold` combines a column.
SUM = 0
MAX = 1
MIN = 2


@cuda.jit
def fold(P, ops, out):
    """``out[o, c] = P[o*SPAN, c] (+|max|min) ... P[o*SPAN + SPAN - 1, c]`` in
    row order; ``ops[c]`` says which (``ops`` of length 0: every column sums).

    Grid ``(ceil(L / ROW_THREADS), ceil(B / SPAN))``, block ``ROW_THREADS``.
    """
    c = cuda.blockIdx.x * ROW_THREADS + cuda.threadIdx.x
    o = cuda.blockIdx.y
    if c < P.shape[1]:
        op = ops[c] if ops.shape[0] > 0 else SUM
        b0 = o * SPAN
        b1 = min(P.shape[0], b0 + SPAN)
        acc = P[b0, c]
        for b in range(b0 + 1, b1):
            v = P[b, c]
            if op == MAX:
                acc = max(acc, v)
            elif op == MIN:
                acc = min(acc, v)
            else:
                acc += v
        out[o, c] = acc


@cuda.jit
def fold_argmax(values, index, out_values, out_index):
    """Largest value of each run of ``SPAN`` entries and its index; ties go to
    the first (lowest index). ``index`` of length 0 means ``0, 1, 2, ...``.

    Grid ``ceil(ceil(B / SPAN) / ROW_THREADS)``, block ``ROW_THREADS``.
    """
    o = cuda.grid(1)
    if o < out_values.shape[0]:
        b0 = o * SPAN
        b1 = min(values.shape[0], b0 + SPAN)
        best = values[b0]
        arg = index[b0] if index.shape[0] > 0 else b0
        for b in range(b0 + 1, b1):
            v = values[b]
            if v > best:
                best = v
                arg = index[b] if index.shape[0] > 0 else b
        out_values[o] = best
        out_index[o] = arg


@cuda.jit(device=True)
def _observe(acc, v):
    """Fold one value into ``acc = (min, max, non-finite count, sum)``."""
    if math.isfinite(v):
        acc[0] = min(acc[0], v)
        acc[1] = max(acc[1], v)
        acc[3] += v
    else:
        acc[2] += 1.0


@cuda.jit(device=True)
def _start(acc):
    acc[0] = math.inf
    acc[1] = -math.inf
    acc[2] = 0.0
    acc[3] = 0.0


@cuda.jit
def ranges(A, out):
    """For each run of ``SPAN`` rows of a 2-D array, in float64:
    ``(min, max, count of NaN or infinite entries, sum)`` of its finite
    entries (fold the rows with MIN, MAX, SUM, SUM).

    Grid ``ceil(ceil(n / SPAN) / ROW_THREADS)``, block ``ROW_THREADS``.
    """
    o = cuda.grid(1)
    if o < out.shape[0]:
        acc = cuda.local.array(4, numba.float64)
        _start(acc)
        for i in range(o * SPAN, min(A.shape[0], (o + 1) * SPAN)):
            for t in range(A.shape[1]):
                _observe(acc, float(A[i, t]))
        for c in range(4):
            out[o, c] = acc[c]


@cuda.jit
def ranges_1d(a, out):
    """:func:`ranges` of a vector."""
    o = cuda.grid(1)
    if o < out.shape[0]:
        acc = cuda.local.array(4, numba.float64)
        _start(acc)
        for i in range(o * SPAN, min(a.shape[0], (o + 1) * SPAN)):
            _observe(acc, float(a[i]))
        for c in range(4):
            out[o, c] = acc[c]


@cuda.jit
def gather_rows(X, index, out):
    """``out[r] = X[index[r]]``. Grid ``ceil(m / ROW_THREADS)``, block ``ROW_THREADS``."""
    r = cuda.grid(1)
    if r < index.shape[0]:
        for t in range(X.shape[1]):
            out[r, t] = X[index[r], t]


@cuda.jit
def set_values(values, index, value):
    """``values[index[r]] = value`` for every r. Grid 1, block ``ROW_THREADS``."""
    for r in range(cuda.threadIdx.x, index.shape[0], ROW_THREADS):
        values[index[r]] = value


@cuda.jit
def fill(P, value):
    """``P[:, :] = value``. Grid ``(ceil(L / ROW_THREADS), B)``, block ``ROW_THREADS``."""
    c = cuda.blockIdx.x * ROW_THREADS + cuda.threadIdx.x
    if c < P.shape[1]:
        P[cuda.blockIdx.y, c] = value
