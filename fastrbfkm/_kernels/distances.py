"""Squared Euclidean distances between rows of X and centers C.

The distances use the expansion ``||x||^2 - 2 x.c + ||c||^2`` on data shifted
by the centers' mean (translation leaves distances unchanged and the shift
removes most of the cancellation for data far from the origin), clamped at
zero so that they are never negative.
"""

import numpy as np
from numba import njit, prange

from .chunks import BLOCK_ROWS, chunk_bounds, n_chunks


@njit(cache=True)
def prepare_centers(C):
    """Return ``(mu, Ct, cnorm)``: the centers' mean, the shifted centers
    transposed to ``(d, k)`` and their squared norms, all in C's dtype."""
    k, d = C.shape
    mu64 = np.zeros(d)
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
    return (
        np.empty((BLOCK_ROWS, X.shape[1]), dtype=X.dtype),
        np.empty((BLOCK_ROWS, k), dtype=X.dtype),
    )


@njit(cache=True)
def sqdist_rows(X, start, stop, mu, Ct, cnorm, xbuf, out):
    """Squared distances of rows ``start:stop`` (at most ``BLOCK_ROWS``) of X
    into ``out[:stop-start]``.

    ``xbuf`` is a ``(BLOCK_ROWS, d)`` work array and ``out`` is
    ``(BLOCK_ROWS, k)``, both in X's dtype. The cross terms are one BLAS
    matrix product per block (run it with BLAS on one thread: the chunks are
    already parallel); rows past ``stop`` are zero-filled and ignored.
    """
    d = X.shape[1]
    k = Ct.shape[1]
    m = stop - start
    block = xbuf.shape[0]
    norms = np.zeros(block)
    for r in range(block):
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
    np.dot(xbuf, Ct, out)
    for r in range(m):
        for j in range(k):
            s = norms[r] + cnorm[j] - 2.0 * out[r, j]
            out[r, j] = s if s > 0.0 else 0.0


@njit(cache=True, parallel=True)
def squared_distances(X, C):
    """Dense ``(n, k)`` matrix of squared distances, in X's dtype."""
    n = X.shape[0]
    k = C.shape[0]
    mu, Ct, cnorm = prepare_centers(C)
    out = np.empty((n, k), dtype=X.dtype)
    chunks = n_chunks(n, 0)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        for b in range(start, stop, BLOCK_ROWS):
            e = min(stop, b + BLOCK_ROWS)
            sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            out[b:e] = D[: e - b]
    return out
