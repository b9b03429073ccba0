"""Log-sum-exp-stable softmax over one row of energies, and its backward.

A row is given as energies ``e`` (squared distances, or ``-Z`` for logits) at
temperature ``sigma``: the logits are ``z = -e / sigma``. Shifting by the
row's minimum energy makes every exponent ``<= 0``, so nothing overflows and
the winner always contributes exactly 1 to the normalizer: no NaN for any
finite ``sigma > 0``.
"""

import math

import numpy as np
from numba import njit, prange

#: exp(-x) is exactly 0.0 in float64 beyond this; skip the call.
EXP_UNDERFLOW = 746.0


@njit(cache=True)
def softmax_row(e, emin, sigma, r):
    """Fill ``r`` (float64) with softmax(-e / sigma) and return the row's free
    energy ``emin - sigma * log(sum_k exp(-(e_k - emin) / sigma))``."""
    total = 0.0
    for j in range(e.shape[0]):
        a = (e[j] - emin) / sigma
        t = math.exp(-a) if a < EXP_UNDERFLOW else 0.0
        r[j] = t
        total += t
    inv = 1.0 / total
    for j in range(e.shape[0]):
        r[j] *= inv
    return emin - sigma * math.log(total)


@njit(cache=True, parallel=True)
def softmax_backward(R, G):
    """Vector-Jacobian product of softmax: ``g_z = r * (g - sum(r * g))`` row-wise."""
    n, k = R.shape
    out = np.empty_like(R)
    for i in prange(n):
        dot = 0.0
        for j in range(k):
            dot += np.float64(R[i, j]) * G[i, j]
        for j in range(k):
            out[i, j] = R[i, j] * (G[i, j] - dot)
    return out
