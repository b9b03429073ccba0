"""Fused responsibilities -> weighted sufficient statistics, one pass over X.

For one temperature and assignment, rows are processed block by block: their
squared distances, their responsibilities and their contributions to
``N_k = sum_i w_i r_ik``, ``S_k = sum_i w_i r_ik x_i`` and the objective are
formed and folded into per-chunk partial sums, which are then reduced in
chunk order. No ``(n, k)`` array is ever held.
"""

import numpy as np
from numba import njit, prange

from .assignment import HARD, assign_block_row, one_hot, out_of_reach, row_argmin
from .chunks import BLOCK_ROWS, chunk_bounds, n_chunks
from .distances import (
    DIRECT_MAX,
    direct_row,
    distance_buffers,
    nearest_buffers,
    nearest_rows,
    prepare_centers,
    sqdist_rows,
)

#: Entries of the scalar summary returned by :func:`block_stats`.
OBJECTIVE = 0  # sum_i w_i [sum_k r_ik D_ik - sigma H(r_i)]
INERTIA = 1  # sum_i w_i min_k D_ik at the given centers
SUPPORT = 2  # sum_i w_i |{k : r_ik > 0}|
SOFT = 3  # sum_i w_i [row i is not one-hot]
OFF_WINNER_MAX = 4  # max_i (1 - r_i,winner), computed as the mass off the winner
SUPPORT_MAX = 5  # max_i |{k : r_ik > 0}|
N_SUMMARY = 6


@njit(cache=True, parallel=True)
def block_stats(X, C, w, sigma, mode, with_stats):
    """Return ``(N, S, summary)`` for the assignment ``mode`` at ``sigma``.

    ``N`` is ``(k,)`` and ``S`` is ``(k, d)``, both float64 (zeros when
    ``with_stats`` is False, which skips their accumulation); ``summary`` is
    the float64 vector indexed by the constants of this module. ``w`` of
    length 0 means unit weights.
    """
    n, d = X.shape
    k = C.shape[0]
    hard = mode == HARD or sigma == 0.0
    direct = d * k <= DIRECT_MAX
    mu, Ct, cnorm = prepare_centers(C)
    chunks = n_chunks(n, k * (d + 1))
    N_part = np.zeros((chunks, k))
    S_part = np.zeros((chunks, k, d) if with_stats else (chunks, 0, 0))
    sum_part = np.zeros((chunks, N_SUMMARY))
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        xt, dist, best, second, nearest = nearest_buffers(X)
        r = np.empty(k)
        work = np.empty(k)
        row = np.empty(k)
        N = N_part[c]
        S = S_part[c]
        objective = 0.0
        inertia = 0.0
        support_sum = 0.0
        soft = 0.0
        off_max = 0.0
        support_max = 0.0
        for b in range(start, stop, BLOCK_ROWS):
            e = min(stop, b + BLOCK_ROWS)
            if direct:
                nearest_rows(X, b, e, mu, Ct, xt, dist, best, second, nearest)
            else:
                sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            for i in range(b, e):
                wi = w[i] if w.shape[0] else 1.0
                if direct:
                    emin = np.float64(best[i - b])
                    arg = nearest[i - b]
                    lone = hard or out_of_reach(mode, emin, np.float64(second[i - b]), sigma)
                else:
                    emin, arg = row_argmin(D[i - b])
                    lone = hard or one_hot(mode, D[i - b], emin, arg, sigma)
                if lone:
                    # One-hot rows (every row when hard; at low temperature
                    # most): free energy emin, accumulate at the winner only.
                    objective += wi * emin
                    inertia += wi * emin
                    support_sum += wi
                    support_max = max(support_max, 1.0)
                    if with_stats:
                        N[arg] += wi
                        for t in range(d):
                            S[arg, t] += wi * X[i, t]
                    continue
                if direct:  # the row's distances were not formed yet
                    direct_row(X, i, mu, Ct, D[i - b])
                f, emin, arg = assign_block_row(mode, D, i - b, sigma, r, work, row)
                objective += wi * f
                inertia += wi * emin
                support = 0
                off = 0.0
                for j in range(k):
                    rj = r[j]
                    if rj == 0.0:
                        continue
                    support += 1
                    if j != arg:
                        off += rj
                    if with_stats:
                        coef = wi * rj
                        N[j] += coef
                        for t in range(d):
                            S[j, t] += coef * X[i, t]
                support_sum += wi * support
                if support > 1:
                    soft += wi
                off_max = max(off_max, off)
                support_max = max(support_max, support)
        acc = sum_part[c]
        acc[OBJECTIVE] = objective
        acc[INERTIA] = inertia
        acc[SUPPORT] = support_sum
        acc[SOFT] = soft
        acc[OFF_WINNER_MAX] = off_max
        acc[SUPPORT_MAX] = support_max
    N_tot = np.zeros(k)
    S_tot = np.zeros((k, d))
    summary = np.zeros(N_SUMMARY)
    for c in range(chunks):
        N_tot += N_part[c]
        if with_stats:
            S_tot += S_part[c]
        for m in range(N_SUMMARY):
            if m == OFF_WINNER_MAX or m == SUPPORT_MAX:
                summary[m] = max(summary[m], sum_part[c, m])
            else:
                summary[m] += sum_part[c, m]
    return N_tot, S_tot, summary


@njit(cache=True, parallel=True)
def label_stats(X, labels, w, k):
    """``N_k = sum_{labels_i = k} w_i`` and ``S_k = sum_{labels_i = k} w_i x_i``
    (float64), for given hard labels. ``w`` of length 0 means unit weights."""
    n, d = X.shape
    chunks = n_chunks(n, k * (d + 1))
    N_part = np.zeros((chunks, k))
    S_part = np.zeros((chunks, k, d))
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        N = N_part[c]
        S = S_part[c]
        for i in range(start, stop):
            wi = w[i] if w.shape[0] else 1.0
            j = labels[i]
            N[j] += wi
            for t in range(d):
                S[j, t] += wi * X[i, t]
    N_tot = np.zeros(k)
    S_tot = np.zeros((k, d))
    for c in range(chunks):
        N_tot += N_part[c]
        S_tot += S_part[c]
    return N_tot, S_tot


@njit(cache=True, parallel=True)
def reconstruct(X, C, sigma, mode):
    """``x_hat_i = sum_k r_ik c_k`` for every row, ``(n, d)`` in X's dtype,
    without an ``(n, k)`` array (the gradient of the loss in X is
    ``2 w_i (x_i - x_hat_i)``)."""
    n, d = X.shape
    k = C.shape[0]
    mu, Ct, cnorm = prepare_centers(C)
    out = np.empty((n, d), dtype=X.dtype)
    chunks = n_chunks(n, 0)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        r = np.empty(k)
        work = np.empty(k)
        row = np.empty(k)
        acc = np.empty(d)
        for b in range(start, stop, BLOCK_ROWS):
            e = min(stop, b + BLOCK_ROWS)
            sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            for i in range(b, e):
                assign_block_row(mode, D, i - b, sigma, r, work, row)
                acc[:] = 0.0
                for j in range(k):
                    if r[j] != 0.0:
                        for t in range(d):
                            acc[t] += r[j] * C[j, t]
                for t in range(d):
                    out[i, t] = acc[t]
    return out
