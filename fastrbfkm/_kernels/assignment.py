"""Row assignments (hard, softmax, entmax15) and the kernels that return them.

Every assignment is computed from a row of energies ``e`` (squared distances,
or ``-Z`` for logits) at temperature ``sigma``. ``assign_block`` is the single
dispatcher, over a block of rows, that every kernel shares.
"""

import math

import numpy as np
from numba import njit, prange

from .chunks import block_rows, chunk_bounds, n_chunks
from .entmax import entmax15_block
from .layout import (
    centers_for,
    column_buffers,
    dims,
    distance_buffers,
    is_direct,
    nearest_buffers,
    nearest_rows,
    rows_per_block,
    sqdist_cols,
    sqdist_rows,
)
from .softmax import EXP_UNDERFLOW, softmax_block

#: The codes the kernels switch on, one explicit branch each (no catch-all:
#: an unknown code gives NaN responsibilities, never another assignment's).
#: fastrbfkm._model registers each under its public name.
HARD = 0
SOFTMAX = 1
ENTMAX15 = 2


@njit(cache=True)
def row_argmin(e):
    """``(min, argmin)`` of a row; ties go to the lowest index.

    The minimum is taken in four independent lanes (branch-free, no chain
    of dependent compares), then the first entry equal to it is found.
    """
    k = e.shape[0]
    m0 = e[0]
    m1 = m0
    m2 = m0
    m3 = m0
    j = 0
    while j + 4 <= k:
        m0 = min(m0, e[j])
        m1 = min(m1, e[j + 1])
        m2 = min(m2, e[j + 2])
        m3 = min(m3, e[j + 3])
        j += 4
    best = min(min(m0, m1), min(m2, m3))
    while j < k:
        best = min(best, e[j])
        j += 1
    arg = 0
    while arg < k - 1 and e[arg] != best:
        arg += 1
    return np.float64(best), arg


@njit(cache=True)
def soft_buffers(k, rows):
    """Per-chunk work arrays of :func:`assign_block` for ``rows`` rows:
    ``(E, R, work, emin, arg, F)``, float64 (``arg`` int64)."""
    return (
        np.empty((rows, k)),
        np.empty((rows, k)),
        np.empty((rows, k)),
        np.empty(rows),
        np.empty(rows, dtype=np.int64),
        np.empty(rows),
    )


@njit(cache=True)
def load_gaps(D, m, E, emin, arg):
    """For the first ``m`` rows of the block ``D`` (any float dtype): each
    row's minimum and argmin into ``emin`` and ``arg``, and its gaps
    ``D[r] - emin[r] >= 0`` into the float64 block ``E`` (exact for float32
    rows; float32 rows made softmax 10x slower, and one row type means one
    specialization of the assignment functions). ``E`` may be ``D``."""
    for r in range(m):
        em, a = row_argmin(D[r])
        emin[r] = em
        arg[r] = a
        for j in range(D.shape[1]):
            E[r, j] = D[r, j] - em


@njit(cache=True)
def assign_block(mode, E, m, sigma, emin, arg, R, F, work):
    """The assignment of the first ``m`` rows of a block of energy gaps.

    ``E`` holds each row's energies minus their minimum ``emin`` (so ``>=
    0``, exactly 0 at the argmin ``arg``); ``E``, ``R`` and ``work`` are
    C-contiguous float64 ``(rows, k)`` arrays. Fills ``R`` with the
    responsibilities and ``F`` with each row's free energy ``sum_k r_k e_k -
    sigma * H(r)``. ``sigma == 0`` is the hard limit for every mode. An
    unregistered ``mode`` fills ``R`` and ``F`` with NaN.
    """
    k = E.shape[1]
    if mode == HARD or sigma == 0.0:
        for r in range(m):
            for j in range(k):
                R[r, j] = 0.0
            R[r, arg[r]] = 1.0
            F[r] = emin[r]
    elif mode == SOFTMAX:
        softmax_block(E, m, emin, sigma, R, F, work)
    elif mode == ENTMAX15:
        entmax15_block(E, m, emin, sigma, R, F, work)
    else:
        for r in range(m):
            for j in range(k):
                R[r, j] = np.nan
            F[r] = np.nan


#: Entmax15 keeps an entry whose scaled gap is at most 1: below this.
_ENTMAX_REACH = np.nextafter(1.0, 2.0)


@njit(cache=True)
def reach(mode, sigma):
    """``(scale, limit)``: an entry with energy gap ``g > 0`` over its row's
    minimum can get a nonzero responsibility iff ``g * scale < limit``, as
    the block functions compute it (softmax: ``exp(-g / sigma)`` has not
    underflowed to 0; entmax15: the half gap ``g / (2 sigma)`` is at most 1,
    a candidate). Hard rows are treated as entmax15's (their callers test
    hardness first); an unregistered ``mode`` keeps every entry in reach,
    so that its rows go through :func:`assign_block`."""
    if mode == SOFTMAX:
        return 1.0 / sigma, EXP_UNDERFLOW
    elif mode == ENTMAX15 or mode == HARD:
        return 0.5 / sigma, _ENTMAX_REACH
    return 0.0, np.inf


@njit(cache=True)
def jacobian_weight(mode, r):
    """``psi(r)``, a responsibility's weight in the scatter whose largest
    eigenvalue gives a critical temperature (the assignment's Jacobian at
    a split): ``r`` for softmax, ``sqrt(r)`` for entmax15; hard rows are
    one-hot (``r`` is 0 or 1, its own square root). NaN for an
    unregistered ``mode``. Compiled for the CPU here and for the GPU by
    :mod:`fastrbfkm.cuda.sums`."""
    if mode == SOFTMAX:
        return r
    elif mode == ENTMAX15 or mode == HARD:
        return math.sqrt(r)
    return math.nan


@njit(cache=True)
def out_of_reach(emin, value, scale, limit):
    """Whether an energy ``value >= emin`` gets exactly zero responsibility
    in a row whose minimum is ``emin`` (``scale, limit`` from :func:`reach`).
    A row whose other entries are all out of reach is exactly one-hot, with
    free energy ``emin``."""
    g = value - emin
    return g > 0.0 and not g * scale < limit


@njit(cache=True)
def one_hot(e, emin, scale, limit):
    """Whether every entry of row ``e`` but one (its argmin, of energy
    ``emin``) is out of reach (:func:`out_of_reach`): a branch-free count of
    the entries within reach, vectorized."""
    within = 0
    for j in range(e.shape[0]):
        g = np.float64(e[j]) - emin
        a = g * scale if g > 0.0 else 0.0
        within += a < limit
    return within == 1


@njit(cache=True, parallel=True)
def hard_assign(X, C, w, with_mind):
    """Labels (int32, as scikit-learn's; ties to the lowest index), each row's
    minimum squared distance (X's dtype; an empty array when ``with_mind`` is
    False, which saves its memory; always given: a default would compile a
    second specialization) and the weighted inertia
    ``sum_i w_i min_k D_ik`` (float64).

    ``w`` of length 0 means unit weights.
    """
    n = dims(X)[0]
    k = C.shape[0]
    direct = is_direct(X, k)
    mu, Ct, cnorm = centers_for(X, C)
    labels = np.empty(n, dtype=np.int32)
    mind = np.empty(n if with_mind else 0, dtype=C.dtype)
    chunks = n_chunks(n, 1)
    partial = np.zeros(chunks)
    step = rows_per_block(X)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, _ = distance_buffers(X, 0)
        xt, dist, best, second, nearest = nearest_buffers(X)
        Cs, DT = column_buffers(X, Ct)
        acc = 0.0
        for b in range(start, stop, step):
            e = min(stop, b + step)
            if direct:
                nearest_rows(X, b, e, mu, Ct, xt, dist, best, second, nearest)
            else:
                sqdist_cols(X, b, e, mu, Cs, cnorm, xbuf, DT, best, best[:0], nearest)
            for i in range(b, e):
                dmin, arg = np.float64(best[i - b]), nearest[i - b]
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
    n = dims(X)[0]
    k = C.shape[0]
    mu, Ct, cnorm = centers_for(X, C)
    out = np.empty((n, k), dtype=C.dtype)
    chunks = n_chunks(n, 0)
    step = min(rows_per_block(X), block_rows(k))
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        E, R, work, emin, arg, F = soft_buffers(k, step)
        for b in range(start, stop, step):
            e = min(stop, b + step)
            sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            load_gaps(D, e - b, E, emin, arg)
            assign_block(mode, E, e - b, sigma, emin, arg, R, F, work)
            for i in range(b, e):
                for j in range(k):
                    out[i, j] = R[i - b, j]
    return out


@njit(cache=True, parallel=True)
def assign_logits(Z, mode):
    """Row-wise softmax or entmax15 of logits ``Z`` (temperature 1), Z's dtype."""
    n, k = Z.shape
    out = np.empty_like(Z)
    chunks = n_chunks(n, 0)
    step = block_rows(k)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        E, R, work, emin, arg, F = soft_buffers(k, step)
        for b in range(start, stop, step):
            e = min(stop, b + step)
            for i in range(b, e):
                for j in range(k):
                    E[i - b, j] = -np.float64(Z[i, j])
            load_gaps(E, e - b, E, emin, arg)
            assign_block(mode, E, e - b, 1.0, emin, arg, R, F, work)
            for i in range(b, e):
                for j in range(k):
                    out[i, j] = R[i - b, j]
    return out


@njit(cache=True, parallel=True)
def squared_distances(X, C):
    """Dense ``(n, k)`` matrix of squared distances, in X's dtype."""
    n = dims(X)[0]
    k = C.shape[0]
    mu, Ct, cnorm = centers_for(X, C)
    out = np.empty((n, k), dtype=C.dtype)
    chunks = n_chunks(n, 0)
    step = rows_per_block(X)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        for b in range(start, stop, step):
            e = min(stop, b + step)
            sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            out[b:e] = D[: e - b]
    return out
