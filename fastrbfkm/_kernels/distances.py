"""Squared Euclidean distances between rows of X and centers C.

The distances use the expansion ``||x||^2 - 2 x.c + ||c||^2`` on data shifted
by the centers' mean (translation leaves distances unchanged and the shift
removes most of the cancellation for data far from the origin), clamped at
zero so that they are never negative; the cross terms are one BLAS product
per block of rows. For tiny ``d * k`` they are summed squared differences
instead (exact, and cheaper than a BLAS call per block).
"""

import numpy as np
from numba import njit

from .chunks import block_rows

#: Up to this many products d * k, distances are summed differences instead
#: of a BLAS product per block.
DIRECT_MAX = 128


@njit(cache=True, inline="always")
def row_sqdist(A, i, B, j):
    """``||A[i] - B[j]||^2`` in float64, summed from the differences."""
    acc = 0.0
    for t in range(A.shape[1]):
        diff = np.float64(A[i, t]) - B[j, t]
        acc += diff * diff
    return acc


@njit(cache=True)
def prepare_centers(C, shift):
    """Return ``(mu, Ct, cnorm)``: the centers' mean, the shifted centers
    transposed to ``(d, k)`` and their squared norms, all in C's dtype.
    Without ``shift``, ``mu`` is zero and the centers are as given."""
    k, d = C.shape
    mu64 = np.zeros(d)
    if shift:
        for j in range(k):
            for t in range(d):
                mu64[t] += C[j, t]
        mu64 /= k
    mu = mu64.astype(C.dtype)
    Ct = np.empty((d, k), dtype=C.dtype)
    cnorm = np.empty(k, dtype=C.dtype)
    for j in range(k):
        acc = 0.0
        for t in range(d):
            v = C[j, t] - mu[t]
            Ct[t, j] = v
            acc += np.float64(v) * v
        cnorm[j] = acc
    return mu, Ct, cnorm


@njit(cache=True)
def distance_buffers(X, k):
    """Per-chunk work arrays of :func:`sqdist_rows`: ``(xbuf, D)``, in X's dtype."""
    rows = block_rows(X.shape[1])
    return (
        np.empty((rows, X.shape[1]), dtype=X.dtype),
        np.empty((rows, k), dtype=X.dtype),
    )


@njit(cache=True)
def direct_row(X, i, mu, Ct, out):
    """Squared distances of row i as summed squared differences (vectorized
    over the centers) into ``out`` (length k, X's dtype)."""
    d = X.shape[1]
    k = Ct.shape[1]
    for j in range(k):
        out[j] = 0.0
    for t in range(d):
        v = X[i, t] - mu[t]
        for j in range(k):
            diff = v - Ct[t, j]
            out[j] += diff * diff


@njit(cache=True)
def shifted_block(X, start, m, mu, xbuf):
    """Rows ``start:start+m`` of X minus ``mu`` into ``xbuf`` (the rest of its
    rows zero-filled), and their squared norms (float64, ``(len(xbuf),)``)."""
    d = X.shape[1]
    norms = np.zeros(xbuf.shape[0])
    for r in range(xbuf.shape[0]):
        if r < m:
            acc = 0.0
            for t in range(d):
                v = X[start + r, t] - mu[t]
                xbuf[r, t] = v
                acc += np.float64(v) * v
            norms[r] = acc
        else:
            for t in range(d):
                xbuf[r, t] = 0.0
    return norms


@njit(cache=True)
def sqdist_rows(X, start, stop, mu, Ct, cnorm, xbuf, out):
    """Squared distances of rows ``start:stop`` (at most :func:`~.chunks.block_rows`) of X
    into ``out[:stop-start]``.

    ``xbuf`` is a ``(rows, d)`` work array and ``out`` is
    ``(rows, k)`` (:func:`distance_buffers`), both in X's dtype. The cross terms are one BLAS
    matrix product per block (run it with BLAS on one thread: the chunks are
    already parallel); rows past ``stop`` are zero-filled and ignored. When
    ``d * k <= DIRECT_MAX`` the distances are summed squared differences.
    """
    d = X.shape[1]
    k = Ct.shape[1]
    m = stop - start
    if d * k <= DIRECT_MAX:
        # For tiny d * k a BLAS call per block costs more than the arithmetic.
        for r in range(m):
            direct_row(X, start + r, mu, Ct, out[r])
        return
    norms = shifted_block(X, start, m, mu, xbuf)
    np.dot(xbuf, Ct, out)
    for r in range(m):
        for j in range(k):
            s = norms[r] + cnorm[j] - 2.0 * out[r, j]
            out[r, j] = s if s > 0.0 else 0.0


@njit(cache=True)
def column_buffers(X, Ct):
    """Work arrays of :func:`sqdist_cols`: ``(Cs, DT)``, the shifted centers
    ``(k, d)`` (``Ct`` transposed) and the transposed distance block
    ``(k, block_rows(d))``, in X's dtype."""
    d, k = Ct.shape
    Cs = np.empty((k, d), dtype=X.dtype)
    for j in range(k):
        for t in range(d):
            Cs[j, t] = Ct[t, j]
    return Cs, np.empty((k, block_rows(d)), dtype=X.dtype)


@njit(cache=True)
def sqdist_cols(X, start, stop, mu, Cs, cnorm, xbuf, DT, best, second, arg):
    """:func:`sqdist_rows` transposed, with each row's nearest center.

    The squared distances of rows ``start:stop`` (at most ``block_rows(d)``)
    go to ``DT[:, :stop-start]`` (``(k, block_rows(d))``, X's dtype) as one
    BLAS product ``Cs @ xbuf.T``; in the same sweep, clamped at zero column
    by column, each row's nearest center (ties to the lowest index) and its
    squared distance go to ``arg`` and ``best``, and, unless ``second`` is
    empty, the second-smallest squared distance to ``second`` (``inf`` when
    k = 1; equal to ``best`` on a tie). Every step runs across the
    rows in SIMD lanes, the running minima as selects, not branches (a row
    at a time, the argmin was a chain of dependent compares). ``Cs`` is
    from :func:`column_buffers`. Entries past ``stop - start`` are garbage.
    """
    k = Cs.shape[0]
    m = stop - start
    block = xbuf.shape[0]
    norms = shifted_block(X, start, m, mu, xbuf)
    np.dot(Cs, xbuf.T, DT)
    for r in range(block):
        best[r] = np.inf
        arg[r] = 0
    if second.shape[0] > 0:
        for r in range(block):
            second[r] = np.inf
        for j in range(k):
            cj = np.float64(cnorm[j])
            for r in range(block):
                s = norms[r] + cj - 2.0 * DT[j, r]
                DT[j, r] = s if s > 0.0 else 0.0  # compared in X's dtype, as below
                closer = DT[j, r] < best[r]
                second[r] = min(second[r], max(best[r], DT[j, r]))
                best[r] = DT[j, r] if closer else best[r]
                arg[r] = j if closer else arg[r]
        return
    for j in range(k):
        cj = np.float64(cnorm[j])
        for r in range(block):
            s = norms[r] + cj - 2.0 * DT[j, r]
            DT[j, r] = s if s > 0.0 else 0.0
            closer = DT[j, r] < best[r]
            best[r] = DT[j, r] if closer else best[r]
            arg[r] = j if closer else arg[r]


@njit(cache=True)
def nearest_buffers(X):
    """Per-chunk work arrays of :func:`nearest_rows`: ``(xt, dist, best, second, arg)``."""
    rows = block_rows(X.shape[1])
    block = np.empty(rows, dtype=X.dtype)
    return (
        np.empty((X.shape[1], rows), dtype=X.dtype),
        block,
        np.empty_like(block),
        np.empty_like(block),
        np.empty(rows, dtype=np.int64),
    )


@njit(cache=True)
def nearest_rows(X, start, stop, mu, Ct, xt, dist, best, second, arg):
    """For rows ``start:stop`` (at most ``block_rows(d)``), when
    ``d * k <= DIRECT_MAX``: the nearest center into ``arg`` (ties to the
    lowest index), its squared distance into ``best`` and the second-smallest
    squared distance into ``second`` (``inf`` when k = 1).

    The same summed squared differences as :func:`direct_row`, but with the
    block transposed into ``xt`` so that every step runs across the rows in
    SIMD lanes and the running minima are selects, not branches. Entries past
    ``stop - start`` are garbage.
    """
    d = X.shape[1]
    k = Ct.shape[1]
    m = stop - start
    for t in range(d):
        for r in range(m):
            xt[t, r] = X[start + r, t] - mu[t]
    block = xt.shape[1]
    for r in range(block):
        best[r] = np.inf
        second[r] = np.inf
        arg[r] = 0
    for j in range(k):
        for r in range(block):
            dist[r] = 0.0
        for t in range(d):
            c = Ct[t, j]
            for r in range(block):
                diff = xt[t, r] - c
                dist[r] += diff * diff
        for r in range(block):
            closer = dist[r] < best[r]
            second[r] = min(second[r], max(best[r], dist[r]))
            best[r] = dist[r] if closer else best[r]
            arg[r] = j if closer else arg[r]
