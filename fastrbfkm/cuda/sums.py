"""Weighted sums over rows on the GPU, in a fixed order: the sufficient
statistics ``N_k``, ``S_k = sum w r x`` (twin of the accumulation in
:func:`fastrbfkm._kernels.block_stats`), the responsibility-weighted scatter
(twin of :func:`fastrbfkm._kernels.center_scatter`) and per-label sums.

Rows are split into ``G`` segments fixed by the shape; segment g's sums go
to row g of a ``(G, width)`` float64 partial array (``+=``, so that the
chunks of one pass add up in chunk order), and :mod:`.reduce` then sums the
segments in order. No float atomics: every partial entry has one owner.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numba
from numba import cuda

from .._kernels.assignment import jacobian_weight
from .config import BLOCK, DEPTH, MICRO, ROW_THREADS, TILE

#: Label of the rows past a segment's end: sorts after every real label.
_PAST_END = 1 << 62

#: What :func:`label_sums` adds up per label.
VALUES = 0  # w * V[i, f]
GAP = 1  # w * (V[i, 1] - V[i, 0])
SCATTER = 2  # (w * (V[i, s] - C[l, s])) * (V[i, t] - C[l, t]), f = s * d + t


@cuda.jit(device=True)
def segment(i0, i1, G, g):
    """Rows ``[s0, s1)`` of segment g when ``[i0, i1)`` is cut into G."""
    size = (i1 - i0 + G - 1) // G
    s0 = min(i1, i0 + g * size)
    return s0, min(i1, s0 + size)


@cuda.jit(device=True)
def contribution(kind, V, C, i, label, f, width, wi):
    """Row i's term of column f of its label's sums (the last column is ``w``)."""
    if f == width - 1:
        return wi
    if kind == VALUES:
        return wi * float(V[i, f])
    if kind == GAP:
        return wi * (float(V[i, 1]) - float(V[i, 0]))
    d = V.shape[1]
    s = f // d
    t = f - s * d
    return (wi * (float(V[i, s]) - float(C[label, s]))) * (float(V[i, t]) - float(C[label, t]))


@cuda.jit
def label_sums(V, labels, w, C, kind, G, P):
    """``P[g, l * width + f] += sum`` over segment g's rows with label l of
    :func:`contribution` (``labels`` of length 0: every row has label 0).

    ``width`` is ``p + 1``: ``p = V.shape[1]`` (VALUES), 1 (GAP) or
    ``V.shape[1] ** 2`` (SCATTER), then the weight. Each block sorts a tile of
    rows by label (stably), and runs of one label are summed in row order by
    the thread that owns the column. Grid ``G``, block ``ROW_THREADS``.
    """
    slab = cuda.shared.array(ROW_THREADS, numba.int64)
    order = cuda.shared.array(ROW_THREADS, numba.int64)
    tid = cuda.threadIdx.x
    g = cuda.blockIdx.x
    pv = V.shape[1]
    if kind == VALUES:
        width = pv + 1
    elif kind == GAP:
        width = 2
    else:
        width = pv * pv + 1
    s0, s1 = segment(0, V.shape[0], G, g)
    for base in range(s0, s1, ROW_THREADS):
        i = base + tid
        lab = _PAST_END
        if i < s1:
            lab = labels[i] if labels.shape[0] > 0 else 0
        slab[tid] = lab
        cuda.syncthreads()
        pos = 0
        for u in range(ROW_THREADS):
            other = slab[u]
            if other < lab or (other == lab and u < tid):
                pos += 1
        order[pos] = tid
        cuda.syncthreads()
        count = min(ROW_THREADS, s1 - base)
        for f in range(tid, width, ROW_THREADS):
            acc = 0.0
            current = -1
            for s in range(count):
                u = order[s]
                label = slab[u]
                row = base + u
                if label != current:
                    if current >= 0:
                        P[g, current * width + f] += acc
                    acc = 0.0
                    current = label
                wi = w[row] if w.shape[0] > 0 else 1.0
                acc += contribution(kind, V, C, row, label, f, width, wi)
            if current >= 0:
                P[g, current * width + f] += acc
        cuda.syncthreads()


@cuda.jit
def soft_scatter(R, i0, i1, X, C, w, mode, G, P):
    """Responsibility-weighted scatter of rows ``[i0, i1)`` (row ``i - i0`` of
    R holds their unweighted responsibilities): for center j and segment g,
    ``P[g, j * width + s * d + t] += sum_i (w_i psi(r_ij) (x_is - c_js)) (x_it - c_jt)``
    and ``P[g, j * width + d * d] += sum_i w_i r_ij``, ``psi(r) = r`` for
    softmax and ``sqrt(r)`` otherwise; rows with ``r_ij = 0`` are skipped.

    Grid ``(ceil(width / ROW_THREADS), k, G)``, block ``ROW_THREADS``.
    """
    d = X.shape[1]
    width = d * d + 1
    f = cuda.blockIdx.x * ROW_THREADS + cuda.threadIdx.x
    j = cuda.blockIdx.y
    g = cuda.blockIdx.z
    if f < width:
        s0, s1 = segment(i0, i1, G, g)
        s = f // d
        t = f - s * d
        acc = 0.0
        for i in range(s0, s1):
            rj = float(R[i - i0, j])
            if rj != 0.0:
                wi = w[i] if w.shape[0] > 0 else 1.0
                if f == width - 1:
                    acc += wi * rj
                else:
                    coef = wi * jacobian_weight(mode, rj)
                    ds = float(X[i, s]) - float(C[j, s])
                    acc += (coef * ds) * (float(X[i, t]) - float(C[j, t]))
        P[g, j * width + f] += acc


@functools.cache
def kernels(dtype_name: str) -> SimpleNamespace:
    """The GEMM-form sums for ``"float32"`` or ``"float64"`` data."""
    nbt = numba.float32 if dtype_name == "float32" else numba.float64

    @cuda.jit
    def weighted_sums(R, i0, i1, X, G, P):
        """``P[g, j * (d + 1) + f] += sum_i R[i - i0, j] * [X[i], 1][f]`` over
        segment g of rows ``[i0, i1)``, in float64: with ``R = w r`` these are
        ``S_j`` and (last column) ``N_j``.

        Grid ``(ceil(k / TILE), ceil((d + 1) / TILE), G)``, block ``(BLOCK, BLOCK)``.
        """
        sr = cuda.shared.array((DEPTH, TILE), nbt)
        sx = cuda.shared.array((DEPTH, TILE), nbt)
        acc = cuda.local.array((MICRO, MICRO), numba.float64)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        tid = ty * BLOCK + tx
        k = R.shape[1]
        d = X.shape[1]
        j0 = cuda.blockIdx.x * TILE
        f0 = cuda.blockIdx.y * TILE
        s0, s1 = segment(i0, i1, G, cuda.blockIdx.z)
        for a in range(MICRO):
            for b in range(MICRO):
                acc[a, b] = 0.0
        for base in range(s0, s1, DEPTH):
            for q in range(tid, DEPTH * TILE, BLOCK * BLOCK):
                t = q // TILE
                c = q - t * TILE
                i = base + t
                j = j0 + c
                f = f0 + c
                sr[t, c] = R[i - i0, j] if (i < s1 and j < k) else 0
                if i < s1 and f < d:
                    sx[t, c] = X[i, f]
                elif i < s1 and f == d:
                    sx[t, c] = 1
                else:
                    sx[t, c] = 0
            cuda.syncthreads()
            for t in range(DEPTH):
                for a in range(MICRO):
                    ra = float(sr[t, ty + BLOCK * a])
                    for b in range(MICRO):
                        acc[a, b] += ra * float(sx[t, tx + BLOCK * b])
            cuda.syncthreads()
        for a in range(MICRO):
            j = j0 + ty + BLOCK * a
            if j < k:
                for b in range(MICRO):
                    f = f0 + tx + BLOCK * b
                    if f <= d:
                        P[cuda.blockIdx.z, j * (d + 1) + f] += acc[a, b]

    return SimpleNamespace(weighted_sums=weighted_sums)
