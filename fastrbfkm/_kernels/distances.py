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
def sqdist_rows(X, start, stop, mu, Ct, cnorm, xbuf, out):
    """Write the squared distances of rows ``start:stop`` of X into ``out[:stop-start]``.

    ``xbuf`` is a work vector of length d in X's dtype.
    """
    d = X.shape[1]
    k = Ct.shape[1]
    for r in range(stop - start):
        i = start + r
        xn = 0.0
        for t in range(d):
            v = X[i, t] - mu[t]
            xbuf[t] = v
            xn += np.float64(v) * v
        row = out[r]
        for j in range(k):
            row[j] = 0.0
        for t in range(d):
            v = xbuf[t]
            for j in range(k):
                row[j] += v * Ct[t, j]
        for j in range(k):
            s = xn + cnorm[j] - 2.0 * row[j]
            row[j] = s if s > 0.0 else 0.0


@njit(cache=True, parallel=True)
def squared_distances(X, C):
    """Dense ``(n, k)`` matrix of squared distances, in X's dtype."""
    n, d = X.shape
    k = C.shape[0]
    mu, Ct, cnorm = prepare_centers(C)
    out = np.empty((n, k), dtype=X.dtype)
    chunks = n_chunks(n, 0)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf = np.empty(d, dtype=X.dtype)
        for b in range(start, stop, BLOCK_ROWS):
            e = min(stop, b + BLOCK_ROWS)
            sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, out[b:e])
    return out
