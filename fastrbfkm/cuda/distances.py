"""Squared distances on the GPU: the twin of :mod:`fastrbfkm._kernels.distances`.

Same quantities as the CPU: the centers are shifted by their mean
(:func:`fastrbfkm._kernels.distances.prepare_centers`, run on the host on
the small C), ``||x - mu||^2`` is accumulated in float64 feature by feature,
the cross terms ``(x - mu).(c - mu)`` are a tiled matrix product in X's dtype,
and ``D = ||x||^2 + ||c||^2 - 2 x.c`` is formed in float64, clamped at 0 and
stored in X's dtype. Only the summation order of the cross terms differs
from BLAS. For ``d * k <= DIRECT_MAX`` the CPU sums squared differences
``((x - mu) - (c - mu))^2`` in X's dtype instead, feature by feature; so does
the same tile here (``direct``), in the same order.

:func:`kernels` builds, per dtype, the kernel that writes a block of
distances and the one that keeps only each row's nearest center (the hard
assignment: no ``(n, k)`` array at all).
"""

from __future__ import annotations

import functools
import math
from types import SimpleNamespace

import numba
from numba import cuda

from .._kernels.distances import DIRECT_MAX
from .config import BLOCK, DEPTH, MICRO, TILE


@cuda.jit(device=True)
def cross_tile(X, i0, i1, Ct, mu, j0, direct, sx, sc, acc):
    """``acc[a, b] = sum_t (X[i, t] - mu[t]) * Ct[t, j]`` (or, when
    ``direct``, ``sum_t ((X[i, t] - mu[t]) - Ct[t, j])^2``) for the calling
    thread's rows ``i = i0 + ty + BLOCK a`` (below ``i1``) and centers
    ``j = j0 + tx + BLOCK b``, in the dtype of ``acc``, features in order.

    ``sx`` (TILE, DEPTH) and ``sc`` (DEPTH, TILE) are the block's shared
    stages; every thread of the block must call this together.
    """
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tid = ty * BLOCK + tx
    d = X.shape[1]
    k = Ct.shape[1]
    for a in range(MICRO):
        for b in range(MICRO):
            acc[a, b] = 0
    for t0 in range(0, d, DEPTH):
        for q in range(tid, TILE * DEPTH, BLOCK * BLOCK):
            r = q // DEPTH
            t = q - r * DEPTH
            i = i0 + r
            f = t0 + t
            if i < i1 and f < d:
                sx[r, t] = X[i, f] - mu[f]
            else:
                sx[r, t] = 0
        for q in range(tid, DEPTH * TILE, BLOCK * BLOCK):
            t = q // TILE
            c = q - t * TILE
            f = t0 + t
            j = j0 + c
            if f < d and j < k:
                sc[t, c] = Ct[f, j]
            else:
                sc[t, c] = 0
        cuda.syncthreads()
        if direct:
            for t in range(min(DEPTH, d - t0)):
                for a in range(MICRO):
                    xa = sx[ty + BLOCK * a, t]
                    for b in range(MICRO):
                        diff = xa - sc[t, tx + BLOCK * b]
                        acc[a, b] += diff * diff
        else:
            for t in range(DEPTH):
                for a in range(MICRO):
                    xa = sx[ty + BLOCK * a, t]
                    for b in range(MICRO):
                        acc[a, b] += xa * sc[t, tx + BLOCK * b]
        cuda.syncthreads()


@cuda.jit(device=True)
def distance(direct, acc, xnorm, cnorm):
    """A squared distance from its tile sum: the summed squared differences
    themselves, or ``||x||^2 + ||c||^2 - 2 x.c`` in float64, clamped at 0."""
    if direct:
        return float(acc)
    s = xnorm + float(cnorm) - 2.0 * float(acc)
    return s if s > 0.0 else 0.0


@cuda.jit
def row_norms(X, mu, out):
    """``out[i] = ||X[i] - mu||^2`` in float64, features in order (as the CPU)."""
    i = cuda.grid(1)
    if i < X.shape[0]:
        acc = 0.0
        for t in range(X.shape[1]):
            v = X[i, t] - mu[t]
            acc += float(v) * float(v)
        out[i] = acc


@functools.cache
def kernels(dtype_name: str) -> SimpleNamespace:
    """The distance kernels for ``"float32"`` or ``"float64"`` data."""
    nbt = numba.float32 if dtype_name == "float32" else numba.float64

    @cuda.jit
    def distances(X, i0, i1, Ct, mu, xnorm, cnorm, E):
        """``E[i - i0, j] = ||X[i] - C[j]||^2`` for rows ``i0 <= i < i1``.

        Grid ``(ceil((i1 - i0) / TILE), ceil(k / TILE))``, block ``(BLOCK, BLOCK)``.
        """
        sx = cuda.shared.array((TILE, DEPTH), nbt)
        sc = cuda.shared.array((DEPTH, TILE), nbt)
        acc = cuda.local.array((MICRO, MICRO), nbt)
        r0 = i0 + cuda.blockIdx.x * TILE
        j0 = cuda.blockIdx.y * TILE
        k = Ct.shape[1]
        direct = X.shape[1] * k <= DIRECT_MAX
        cross_tile(X, r0, i1, Ct, mu, j0, direct, sx, sc, acc)
        for a in range(MICRO):
            i = r0 + cuda.threadIdx.y + BLOCK * a
            if i < i1:
                for b in range(MICRO):
                    j = j0 + cuda.threadIdx.x + BLOCK * b
                    if j < k:
                        E[i - i0, j] = distance(direct, acc[a, b], xnorm[i], cnorm[j])

    @cuda.jit
    def nearest(X, Ct, mu, xnorm, cnorm, w, labels, mind, second, partial):
        """Per row: the nearest center (ties to the lowest index), its squared
        distance and (when ``second`` is not empty) the second smallest one,
        all compared in X's dtype as the CPU does; per block of TILE rows:
        ``partial[block] = (sum w * mind, sum w)`` in row order.

        Grid ``ceil(n / TILE)``, block ``(BLOCK, BLOCK)``.
        """
        sx = cuda.shared.array((TILE, DEPTH), nbt)
        sc = cuda.shared.array((DEPTH, TILE), nbt)
        acc = cuda.local.array((MICRO, MICRO), nbt)
        best = cuda.local.array(MICRO, nbt)
        sec = cuda.local.array(MICRO, nbt)
        arg = cuda.local.array(MICRO, numba.int32)
        s_best = cuda.shared.array((TILE, BLOCK), nbt)
        s_sec = cuda.shared.array((TILE, BLOCK), nbt)
        s_arg = cuda.shared.array((TILE, BLOCK), numba.int32)
        s_row = cuda.shared.array((TILE, 2), numba.float64)
        n = X.shape[0]
        k = Ct.shape[1]
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        r0 = cuda.blockIdx.x * TILE
        for a in range(MICRO):
            best[a] = math.inf
            sec[a] = math.inf
            arg[a] = 0
        direct = X.shape[1] * k <= DIRECT_MAX
        for j0 in range(0, k, TILE):
            cross_tile(X, r0, n, Ct, mu, j0, direct, sx, sc, acc)
            for a in range(MICRO):
                i = r0 + ty + BLOCK * a
                if i < n:
                    for b in range(MICRO):
                        j = j0 + tx + BLOCK * b
                        if j < k:
                            v = nbt(distance(direct, acc[a, b], xnorm[i], cnorm[j]))
                            if v < best[a]:
                                sec[a] = best[a]
                                best[a] = v
                                arg[a] = j
                            elif v < sec[a]:
                                sec[a] = v
        for a in range(MICRO):
            r = ty + BLOCK * a
            s_best[r, tx] = best[a]
            s_sec[r, tx] = sec[a]
            s_arg[r, tx] = arg[a]
        cuda.syncthreads()
        if tx == 0:
            for a in range(MICRO):
                r = ty + BLOCK * a
                i = r0 + r
                if i < n:
                    bv = s_best[r, 0]
                    ba = s_arg[r, 0]
                    bs = s_sec[r, 0]
                    for u in range(1, BLOCK):
                        v = s_best[r, u]
                        au = s_arg[r, u]
                        if v < bv or (v == bv and au < ba):
                            bs = min(bv, s_sec[r, u])
                            bv = v
                            ba = au
                        else:
                            bs = min(bs, v)
                    labels[i] = ba
                    mind[i] = bv
                    if second.shape[0] > 0:
                        second[i] = bs
                    wi = w[i] if w.shape[0] > 0 else 1.0
                    s_row[r, 0] = wi * float(bv)
                    s_row[r, 1] = wi
                else:
                    s_row[r, 0] = 0.0
                    s_row[r, 1] = 0.0
        cuda.syncthreads()
        if tx == 0 and ty == 0:
            total = 0.0
            weight = 0.0
            for r in range(TILE):
                total += s_row[r, 0]
                weight += s_row[r, 1]
            partial[cuda.blockIdx.x, 0] = total
            partial[cuda.blockIdx.x, 1] = weight

    return SimpleNamespace(distances=distances, nearest=nearest)


@cuda.jit
def square_root(E):
    """``E = sqrt(E)`` in place (Euclidean from squared distances).

    Grid ``ceil(n / TILE)``, block ``TILE``.
    """
    i = cuda.grid(1)
    if i < E.shape[0]:
        for j in range(E.shape[1]):
            E[i, j] = math.sqrt(E[i, j])
