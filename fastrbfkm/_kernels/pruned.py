"""Hard passes that skip the centers a row cannot be nearest to (Hamerly 2010).

Between two Lloyd iterations most rows keep their nearest center, and a
bound says so without forming the row's k distances. Every row carries its
label and a lower bound ``lower[i]`` on its distance (not squared) to every
other center; both are 12 bytes a row (int32 and float64), the only state
kept between passes. A pass at new centers first loosens each bound by how
far the centers moved (the largest move of a center other than the row's
own), then forms the row's distance to its own center; when that is below
both the loosened bound and half the distance from its center to the
nearest other center, the label stands. The other rows are gathered and
their distances to every center formed as in an unpruned pass (one BLAS
product for the gathered block), which also renews their bounds.

The bounds hold for the true distances, and a label is kept only with a
margin of twice the rounding error of the expanded squared distances
(:func:`~.distances.sqdist_cols`), so a kept label is also the one an
unpruned pass would compute. The statistics are folded in row order within
the same fixed chunks as :func:`~.update.block_stats`: with the same labels,
``N`` and ``S`` are bit-identical to its hard pass, for any number of threads.
"""

import numpy as np
from numba import njit, prange

from .chunks import chunk_bounds, n_chunks
from .dense import add_row, centers_for, rows_per_block
from .distances import column_buffers, distance_buffers
from .update import INERTIA, N_SUMMARY, OBJECTIVE, SUPPORT, SUPPORT_MAX, fold_summary


@njit(cache=True)
def _own_sqdist(X, i, C, j, mu):
    """``(||x_i - c_j||^2, ||x_i - mu||^2)``, float64, from the differences."""
    own = 0.0
    norm = 0.0
    for t in range(X.shape[1]):
        x = np.float64(X[i, t])
        diff = x - C[j, t]
        own += diff * diff
        v = x - mu[t]
        norm += v * v
    return own, norm


@njit(cache=True)
def _gathered_nearest(X, rows, m, mu, Cs, cnorm, xbuf, flat, best, second, arg):
    """Nearest and second-nearest squared distances (and the nearest's index,
    ties to the lowest) of the gathered rows ``rows[:m]``, as
    :func:`~.distances.sqdist_cols` computes distances: the rows shifted by
    ``mu`` in X's dtype, one BLAS product with the shifted centers, clamped
    at zero."""
    k, d = Cs.shape
    norms = np.zeros(m)
    for r in range(m):
        acc = 0.0
        for t in range(d):
            v = X[rows[r], t] - mu[t]
            xbuf[r, t] = v
            acc += np.float64(v) * v
        norms[r] = acc
    DT = flat[: k * m].reshape((k, m))
    np.dot(Cs, xbuf[:m].T, DT)
    for r in range(m):
        best[r] = np.inf
        second[r] = np.inf
        arg[r] = 0
    for j in range(k):
        cj = np.float64(cnorm[j])
        for r in range(m):
            s = norms[r] + cj - 2.0 * DT[j, r]
            DT[j, r] = s if s > 0.0 else 0.0
    for j in range(k):
        for r in range(m):
            s = np.float64(DT[j, r])
            closer = s < best[r]
            best[r] = s if closer else best[r]
            arg[r] = j if closer else arg[r]
    for j in range(k):
        for r in range(m):
            s = np.float64(DT[j, r]) if j != arg[r] else np.inf
            second[r] = s if s < second[r] else second[r]


@njit(cache=True)
def _nearest_mover(X, i, MT, movers, own_center, out):
    """The smallest squared distance (float64, from the differences) of row
    i to the centers ``MT`` (transposed, ``(d, m)``, float64: the movers)
    other than ``own_center``; ``inf`` when there is none. Summed across
    the movers in SIMD lanes (``out`` is a work array of length m)."""
    m = MT.shape[1]
    for j in range(m):
        out[j] = 0.0
    for t in range(X.shape[1]):
        x = np.float64(X[i, t])
        for j in range(m):
            diff = x - MT[t, j]
            out[j] += diff * diff
    nearest = np.inf
    for j in range(m):
        if movers[j] != own_center and out[j] < nearest:
            nearest = out[j]
    return nearest


@njit(cache=True, parallel=True)
def pruned_hard_stats(X, C, w, labels, lower, shift, half_gap, movers, first, rounding):
    """One hard pass with bounds: ``(N, S, summary, cells, evaluated)``.

    ``labels`` (int32) and ``lower`` (float64), of length n, are the state
    of the previous pass, updated in place; with ``first`` they are ignored
    and every row's distances are formed. ``shift`` (k,) holds how far each
    center moved since the previous pass, ``half_gap`` (k,) half the
    distance from each center to its nearest other center (both lower
    bounds are what they say: true distances, float64), and ``rounding``
    the relative rounding error of X's dtype times the number of terms of a
    distance. ``movers`` (int64) are centers that moved far (a swap move):
    the bounds are loosened by the other centers' shifts only, and every
    row's distances to the movers are formed instead (a few centers, in
    SIMD lanes), so that a few long moves do not void every bound. ``N``,
    ``S`` and ``summary`` are those of :func:`~.update.block_stats` at
    ``sigma = 0`` (the inertia summed from the distances to the winners in
    float64); ``cells`` (k,) the weighted inertia of each center's cell, the
    same sums; ``evaluated`` counts the row-center distances formed.
    """
    n, d = X.shape
    k = C.shape[0]
    mu, Ct, cnorm = centers_for(X, C)
    C64 = C.astype(np.float64)
    cmax = 0.0
    for j in range(k):
        cmax = max(cmax, np.float64(cnorm[j]))
    # The largest shift of a center that is not a mover, and the largest of
    # the others' (for the row whose own center moved most).
    still = shift.copy()
    for j in movers:
        still[j] = 0.0
    top = 0
    for j in range(k):
        if still[j] > still[top]:
            top = j
    runner = 0.0
    for j in range(k):
        if j != top:
            runner = max(runner, still[j])
    nm = movers.shape[0]
    MT = np.empty((d, nm))
    for j in range(nm):
        for t in range(d):
            MT[t, j] = C64[movers[j], t]
    chunks = n_chunks(n, k * (d + 1))
    N_part = np.zeros((chunks, k))
    S_part = np.zeros((chunks, k, d))
    sum_part = np.zeros((chunks, N_SUMMARY))
    cell_part = np.zeros((chunks, k))
    counted = np.zeros(chunks, dtype=np.int64)
    step = rows_per_block(X)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, _ = distance_buffers(X, 0)
        Cs, _ = column_buffers(X, Ct)
        flat = np.empty(k * step, dtype=X.dtype)
        best = np.empty(step)
        second = np.empty(step)
        arg = np.empty(step, dtype=np.int64)
        rows = np.empty(step, dtype=np.int64)
        mind = np.empty(step)
        slack = np.empty(step)
        near = np.empty(nm)
        N = N_part[c]
        S = S_part[c]
        acc = sum_part[c]
        evaluated = 0
        for b in range(start, stop, step):
            e = min(stop, b + step)
            m = 0
            for i in range(b, e):
                if first:
                    rows[m] = i
                    m += 1
                    continue
                a = labels[i]
                own, norm = _own_sqdist(X, i, C64, a, mu)
                evaluated += 1
                # The rounding error of an expanded squared distance: the
                # label stands when an unpruned pass would find it too.
                err = rounding * (norm + cmax)
                mind[i - b] = own
                slack[i - b] = err
                loose = lower[i] - (runner if a == top else still[top])
                if nm:
                    loose = min(loose, np.sqrt(_nearest_mover(X, i, MT, movers, a, near)))
                    evaluated += nm
                lower[i] = loose
                bound = max(loose, half_gap[a])
                if not (bound > 0.0 and own + 2.0 * err < bound * bound):
                    rows[m] = i
                    m += 1
            if m:
                _gathered_nearest(X, rows, m, mu, Cs, cnorm, xbuf, flat, best, second, arg)
                evaluated += m * k
                for r in range(m):
                    i = rows[r]
                    labels[i] = arg[r]
                    if first:
                        _, norm = _own_sqdist(X, i, C64, arg[r], mu)
                        slack[i - b] = rounding * (norm + cmax)
                    lower[i] = np.sqrt(max(second[r] - slack[i - b], 0.0))
                    mind[i - b] = best[r]
            for i in range(b, e):
                wi = w[i] if w.shape[0] else 1.0
                a = labels[i]
                acc[OBJECTIVE] += wi * mind[i - b]
                acc[INERTIA] += wi * mind[i - b]
                acc[SUPPORT] += wi
                cell_part[c, a] += wi * mind[i - b]
                N[a] += wi
                add_row(X, i, S, a, wi)
        acc[SUPPORT_MAX] = 1.0 if stop > start else 0.0
        counted[c] = evaluated
    N_tot = np.zeros(k)
    S_tot = np.zeros((k, d))
    summary = np.zeros(N_SUMMARY)
    cells = np.zeros(k)
    evaluated = 0
    for c in range(chunks):
        N_tot += N_part[c]
        S_tot += S_part[c]
        cells += cell_part[c]
        fold_summary(summary, sum_part[c])
        evaluated += counted[c]
    return N_tot, S_tot, summary, cells, evaluated
