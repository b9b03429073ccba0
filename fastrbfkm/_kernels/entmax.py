"""Exact sorted-threshold Entmax-1.5 over one row of energies, and its backward.

With logits ``z = -e / sigma`` the row is ``r_k = [z_k / 2 - tau]_+^2`` where
``tau`` makes it sum to 1 (Peters, Niculae and Martins, 2019). We work with
the shifted half-logits ``v_k = -(e_k - emin) / (2 sigma) <= 0`` (entmax is
shift invariant). Only entries with ``v_k >= -1`` (``z_k >= max z - 2``) can
be in the support, so only those are sorted.
"""

import math

import numpy as np
from numba import njit, prange

#: Candidate lists at most this long are sorted by insertion.
_INSERTION_SORT_MAX = 24


@njit(cache=True)
def _sort_ascending(a, m):
    """Sort ``a[:m]`` in place."""
    if m <= _INSERTION_SORT_MAX:
        for i in range(1, m):
            x = a[i]
            j = i - 1
            while j >= 0 and a[j] > x:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
    else:
        a[:m].sort()


@njit(cache=True)
def entmax15_row(e, emin, sigma, r, work):
    """Fill ``r`` (float64) with entmax15(-e / sigma) and return the row's free
    energy ``sum_k r_k e_k - sigma * (4/3) * (1 - sum_k r_k^{3/2})``.

    ``work`` is a float64 vector of length k.
    """
    k = e.shape[0]
    two_sigma = 2.0 * sigma
    # Candidates, as g = -v in [0, 1]; ascending g is descending v.
    m = 0
    for j in range(k):
        g = (e[j] - emin) / two_sigma
        if g <= 1.0:
            work[m] = g
            m += 1
    _sort_ascending(work, m)
    # tau_rho = mean - sqrt(max(delta, 0)); the support is the largest rho
    # with tau_rho <= v_(rho). rho = 1 always qualifies (tau_1 = v_(1) - 1).
    tau = -1.0
    s1 = 0.0
    s2 = 0.0
    for rho in range(1, m + 1):
        v = -work[rho - 1]
        s1 += v
        s2 += v * v
        mean = s1 / rho
        delta = (1.0 - rho * (s2 / rho - mean * mean)) / rho
        t = mean - math.sqrt(max(delta, 0.0))
        if t <= v:
            tau = t
    energy = 0.0
    power = 0.0  # sum r^{3/2}
    for j in range(k):
        q = -(e[j] - emin) / two_sigma - tau
        if q > 0.0:
            rj = q * q
            r[j] = rj
            energy += rj * (e[j] - emin)
            power += rj * q
        else:
            r[j] = 0.0
    return emin + energy - sigma * (4.0 / 3.0) * (1.0 - power)


@njit(cache=True, parallel=True)
def entmax15_backward(R, G):
    """Vector-Jacobian product of entmax15 with ``q = sqrt(r)``:
    ``g_z = q * g - q * sum(q * g) / sum(q)`` row-wise (zero off the support)."""
    n, k = R.shape
    out = np.empty_like(R)
    for i in prange(n):
        qg = 0.0
        qs = 0.0
        for j in range(k):
            q = math.sqrt(np.float64(R[i, j]))
            qg += q * G[i, j]
            qs += q
        mean = qg / qs
        for j in range(k):
            q = math.sqrt(np.float64(R[i, j]))
            out[i, j] = q * (G[i, j] - mean)
    return out
