"""Row assignments (hard, softmax, entmax15) and the kernels that return them.

Every assignment is computed from a row of energies ``e`` (squared distances,
or ``-Z`` for logits) at temperature ``sigma``. ``assign_row`` is the single
dispatcher that the dense kernels here and the fused statistics kernel share.
"""

import numpy as np
from numba import njit, prange

from .chunks import BLOCK_ROWS, chunk_bounds, n_chunks
from .distances import (
    DIRECT_MAX,
    distance_buffers,
    nearest_buffers,
    nearest_rows,
    prepare_centers,
    sqdist_rows,
)
from .entmax import entmax15_row, half_gap
from .softmax import EXP_UNDERFLOW, softmax_row

HARD = 0
SOFTMAX = 1
ENTMAX15 = 2


@njit(cache=True)
def row_argmin(e):
    """``(min, argmin)`` of a row; ties go to the lowest index."""
    best = e[0]
    arg = 0
    for j in range(1, e.shape[0]):
        if e[j] < best:
            best = e[j]
            arg = j
    return np.float64(best), arg


@njit(cache=True)
def assign_row(mode, e, sigma, r, work):
    """Fill ``r`` (float64, length k) with the row's assignment.

    Returns ``(free_energy, emin, winner)``: the row's free energy
    ``sum_k r_k e_k - sigma * H(r)``, its minimum energy and its argmin.
    ``sigma == 0`` is the hard limit for every mode.
    """
    emin, arg = row_argmin(e)
    if mode == HARD or sigma == 0.0:
        r[:] = 0.0
        r[arg] = 1.0
        return emin, emin, arg
    if mode == SOFTMAX:
        return softmax_row(e, emin, sigma, r, work), emin, arg
    return entmax15_row(e, emin, sigma, r, work), emin, arg


@njit(cache=True)
def out_of_reach(mode, emin, value, sigma):
    """Whether an energy ``value >= emin`` gets exactly zero responsibility
    in a row whose minimum is ``emin``, as the row functions decide it
    (entmax15: not a candidate, its half gap exceeds 1; softmax: its
    exponential underflows to 0). A row whose other entries are all out of
    reach is exactly one-hot, with free energy ``emin``."""
    if mode == SOFTMAX:
        return (value - emin) / sigma >= EXP_UNDERFLOW
    return half_gap(value, emin, sigma) > 1.0


@njit(cache=True)
def one_hot(mode, e, emin, arg, sigma):
    """Whether every entry of row ``e`` but its argmin ``arg`` is out of reach
    (:func:`out_of_reach`, with entmax15's half gap written out so that the
    scale ``0.5 / sigma`` is formed once per row: the same products)."""
    if mode == SOFTMAX:
        for j in range(e.shape[0]):
            if j != arg and not out_of_reach(mode, emin, np.float64(e[j]), sigma):
                return False
        return True
    scale = 0.5 / sigma
    for j in range(e.shape[0]):
        # half_gap(v) > 1 is (v - emin) * scale > 1 when v > emin, and false
        # otherwise; the product below is <= 0 or NaN exactly then.
        if j != arg and not (np.float64(e[j]) - emin) * scale > 1.0:
            return False
    return True


@njit(cache=True)
def assign_block_row(mode, D, i, sigma, r, work, row):
    """:func:`assign_row` on row ``i`` of a distance block, handed over as the
    float64 vector ``row`` (float32 rows made softmax 10x slower, and one row
    type means one specialization of the row functions)."""
    for j in range(D.shape[1]):
        row[j] = D[i, j]
    return assign_row(mode, row, sigma, r, work)


@njit(cache=True, parallel=True)
def hard_assign(X, C, w, with_mind=True):
    """Labels (int32, as scikit-learn's; ties to the lowest index), each row's
    minimum squared distance (X's dtype; an empty array when ``with_mind`` is
    False, which saves its memory) and the weighted inertia
    ``sum_i w_i min_k D_ik`` (float64).

    ``w`` of length 0 means unit weights.
    """
    n, d = X.shape
    k = C.shape[0]
    direct = d * k <= DIRECT_MAX
    mu, Ct, cnorm = prepare_centers(C)
    labels = np.empty(n, dtype=np.int32)
    mind = np.empty(n if with_mind else 0, dtype=X.dtype)
    chunks = n_chunks(n, 1)
    partial = np.zeros(chunks)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        xt, dist, best, second, nearest = nearest_buffers(X)
        acc = 0.0
        for b in range(start, stop, BLOCK_ROWS):
            e = min(stop, b + BLOCK_ROWS)
            if direct:
                nearest_rows(X, b, e, mu, Ct, xt, dist, best, second, nearest)
            else:
                sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            for i in range(b, e):
                if direct:
                    dmin, arg = np.float64(best[i - b]), nearest[i - b]
                else:
                    dmin, arg = row_argmin(D[i - b])
                labels[i] = arg
                if with_mind:
                    mind[i] = dmin
                acc += dmin * (w[i] if w.shape[0] else 1.0)
        partial[c] = acc
    inertia = 0.0
    for c in range(chunks):
        inertia += partial[c]
    return labels, mind, inertia


@njit(cache=True, parallel=True)
def responsibilities(X, C, sigma, mode):
    """Dense ``(n, k)`` responsibilities in X's dtype."""
    n = X.shape[0]
    k = C.shape[0]
    mu, Ct, cnorm = prepare_centers(C)
    out = np.empty((n, k), dtype=X.dtype)
    chunks = n_chunks(n, 0)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        r = np.empty(k)
        work = np.empty(k)
        row = np.empty(k)
        for b in range(start, stop, BLOCK_ROWS):
            e = min(stop, b + BLOCK_ROWS)
            sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            for i in range(b, e):
                assign_block_row(mode, D, i - b, sigma, r, work, row)
                for j in range(k):
                    out[i, j] = r[j]
    return out


@njit(cache=True, parallel=True)
def assign_logits(Z, mode):
    """Row-wise softmax or entmax15 of logits ``Z`` (temperature 1), Z's dtype."""
    n, k = Z.shape
    out = np.empty_like(Z)
    chunks = n_chunks(n, 0)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        e = np.empty(k)
        r = np.empty(k)
        work = np.empty(k)
        for i in range(start, stop):
            for j in range(k):
                e[j] = -np.float64(Z[i, j])
            assign_row(mode, e, 1.0, r, work)
            for j in range(k):
                out[i, j] = r[j]
    return out


@njit(cache=True, parallel=True)
def removal_costs(X, C, w):
    """Per center, the rise in weighted inertia if it were removed and its
    points went to their second-nearest center (float64, ``(k,)``; zeros for
    k = 1). ``w`` of length 0 means unit weights."""
    n = X.shape[0]
    k = C.shape[0]
    mu, Ct, cnorm = prepare_centers(C)
    chunks = n_chunks(n, k)
    partial = np.zeros((chunks, k))
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        for b in range(start, stop, BLOCK_ROWS):
            e = min(stop, b + BLOCK_ROWS)
            sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            for i in range(b, e):
                row = D[i - b]
                dmin, arg = row_argmin(row)
                second = np.inf
                for j in range(k):
                    if j != arg and row[j] < second:
                        second = row[j]
                if k > 1:
                    partial[c, arg] += (w[i] if w.shape[0] else 1.0) * (second - dmin)
    costs = np.zeros(k)
    for c in range(chunks):
        costs += partial[c]
    return costs
