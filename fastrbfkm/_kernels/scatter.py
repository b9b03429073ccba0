"""Responsibility-weighted scatter of the data around chosen centers.

For center j, ``A_j = sum_i w_i psi(r_ij) (x_i - c_j)(x_i - c_j)^T`` with
``psi(r) = r`` for softmax and ``sqrt(r)`` for entmax15, and
``N_j = sum_i w_i r_ij``. The largest eigenvalue of ``A_j / N_j``, doubled, is
the temperature below which coincident copies of center j split apart
(the critical temperature of docs/conventions.md, generalised from the
all-at-the-mean start to any group of coincident centers).
"""

import math

import numpy as np
from numba import njit, prange

from .assignment import SOFTMAX, assign_block, load_gaps, soft_buffers
from .chunks import BLOCK_ROWS, chunk_bounds, n_chunks
from .distances import distance_buffers, prepare_centers, sqdist_rows


@njit(cache=True, parallel=True)
def center_scatter(X, C, w, sigma, mode, chosen):
    """``(N, A)`` for the centers ``C[chosen]``, with responsibilities over all of C.

    ``N`` is ``(m,)`` and ``A`` is ``(m, d, d)``, float64. ``w`` of length 0
    means unit weights.
    """
    n, d = X.shape
    k = C.shape[0]
    m = chosen.shape[0]
    mu, Ct, cnorm = prepare_centers(C)
    chunks = n_chunks(n, m * (d * d + 1))
    N_part = np.zeros((chunks, m))
    A_part = np.zeros((chunks, m, d, d))
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        diff = np.empty(d)
        E, R, work, emin, arg, F = soft_buffers(k)
        for b in range(start, stop, BLOCK_ROWS):
            e = min(stop, b + BLOCK_ROWS)
            sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            load_gaps(D, e - b, E, emin, arg)
            assign_block(mode, E, e - b, sigma, emin, arg, R, F, work)
            for i in range(b, e):
                wi = w[i] if w.shape[0] else 1.0
                for g in range(m):
                    j = chosen[g]
                    rj = R[i - b, j]
                    if rj == 0.0:
                        continue
                    N_part[c, g] += wi * rj
                    coef = wi * (rj if mode == SOFTMAX else math.sqrt(rj))
                    for t in range(d):
                        diff[t] = np.float64(X[i, t]) - C[j, t]
                    A = A_part[c, g]
                    for s in range(d):
                        v = coef * diff[s]
                        for t in range(d):
                            A[s, t] += v * diff[t]
    N = np.zeros(m)
    A = np.zeros((m, d, d))
    for c in range(chunks):
        N += N_part[c]
        A += A_part[c]
    return N, A
