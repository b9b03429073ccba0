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
the same fixed chunks as :func:`~.update.block_pass`: with the same labels,
``N`` and ``S`` are bit-identical to its hard pass, for any number of threads.
"""

import numpy as np
from numba import njit, prange

from .assignment import assign_block, one_hot, reach, row_argmin, soft_buffers
from .chunks import chunk_bounds, n_chunks
from .dense import add_row, centers_for, gemm_buffers, rows_per_block, scatter_rows
from .distances import column_buffers, distance_buffers, row_sqdist
from .update import (
    INERTIA,
    N_SUMMARY,
    OBJECTIVE,
    SUPPORT,
    SUPPORT_MAX,
    fold_soft,
    fold_summary,
    soft_rows,
)

#: Centers whose products with all the others are formed together by
#: :func:`nearest_gaps` (a ``(GAP_ROWS, k)`` float64 block a chunk).
GAP_ROWS = 64


@njit(cache=True, parallel=True)
def nearest_gaps(P, norms):
    """Each center's smallest squared distance to another, from the centers
    ``P`` (float64, shifted by their mean) and their squared norms:
    ``norms_i + norms_j - 2 P_i . P_j``, lowered by ``1e-12 (norms_i +
    norms_j) + 1e-300`` so that it is a lower bound of the true distance
    despite the expansion's rounding (``inf`` for one center). The products
    are one BLAS product per block of :data:`GAP_ROWS` centers (run it with
    BLAS on one thread: the blocks are parallel), with no k x k array."""
    k = P.shape[0]
    out = np.empty(k)
    PT = np.ascontiguousarray(P.T)
    for b in prange((k + GAP_ROWS - 1) // GAP_ROWS):
        lo = b * GAP_ROWS
        hi = min(k, lo + GAP_ROWS)
        G = np.empty((hi - lo, k))
        np.dot(P[lo:hi], PT, G)
        for r in range(hi - lo):
            i = lo + r
            best = np.inf
            for j in range(k):
                both = norms[i] + norms[j]
                g = (both - 2.0 * G[r, j]) - (1e-12 * both + 1e-300)
                best = g if (g < best and j != i) else best
            out[i] = best
    return out


@njit(cache=True, parallel=True)
def nearest_centers(P, norms, q):
    """``(k, 1 + q)`` int64: each center's index, then its ``q`` nearest
    other centers nearest first (``0 <= q <= k - 1``), by the expanded
    squared distances ``norms_i + norms_j - 2 P_i . P_j`` (the blocked BLAS
    products of :func:`nearest_gaps`, without its rounding margin; ties to
    the lowest index), with no k x k array."""
    k = P.shape[0]
    out = np.empty((k, 1 + q), dtype=np.int64)
    for i in range(k):
        out[i, 0] = i
    if q <= 0:
        return out
    PT = np.ascontiguousarray(P.T)
    for b in prange((k + GAP_ROWS - 1) // GAP_ROWS):
        lo = b * GAP_ROWS
        hi = min(k, lo + GAP_ROWS)
        G = np.empty((hi - lo, k))
        np.dot(P[lo:hi], PT, G)
        dist = np.empty(q)
        index = np.empty(q, dtype=np.int64)
        for r in range(hi - lo):
            i = lo + r
            dist[:] = np.inf
            index[:] = -1
            for j in range(k):
                g = norms[i] + norms[j] - 2.0 * G[r, j]
                if j == i or not g < dist[q - 1]:
                    continue
                s = q - 1
                while s > 0 and g < dist[s - 1]:  # insertion: ties keep the lower index first
                    dist[s] = dist[s - 1]
                    index[s] = index[s - 1]
                    s -= 1
                dist[s] = g
                index[s] = j
            out[i, 1:] = index
    return out


@njit(cache=True, parallel=True)
def own_sqdists(X, C, labels):
    """Each row's squared distance to its own center ``C[labels[i]]``,
    float64 from the differences: ``(n,)``. With the labels of a pruned
    pass at C (its nearest centers), the rows' distances to their nearest
    center at the cost of one distance a row, not k."""
    n = X.shape[0]
    C64 = C.astype(np.float64)
    out = np.empty(n)
    chunks = n_chunks(n, 1)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        for i in range(start, stop):
            out[i] = row_sqdist(X, i, C64, labels[i])
    return out


@njit(cache=True, inline="always")
def _own_sqdist(X, i, C, j):
    """``||x_i - c_j||^2``, float64, from the differences summed in four
    interleaved partial sums (four independent chains: a row's one chain
    of d dependent additions was most of a pass whose bounds hold)."""
    d = X.shape[1]
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    t = 0
    while t + 4 <= d:
        e0 = np.float64(X[i, t]) - C[j, t]
        e1 = np.float64(X[i, t + 1]) - C[j, t + 1]
        e2 = np.float64(X[i, t + 2]) - C[j, t + 2]
        e3 = np.float64(X[i, t + 3]) - C[j, t + 3]
        a0 += e0 * e0
        a1 += e1 * e1
        a2 += e2 * e2
        a3 += e3 * e3
        t += 4
    while t < d:
        e0 = np.float64(X[i, t]) - C[j, t]
        a0 += e0 * e0
        t += 1
    return (a0 + a1) + (a2 + a3)


@njit(cache=True)
def _center_offsets(C64, mu):
    """Each center's distance (not squared) to ``mu``, float64: with a row's
    distance to its own center, a bound on the row's distance to ``mu``."""
    k, d = C64.shape
    out = np.empty(k)
    for j in range(k):
        acc = 0.0
        for t in range(d):
            v = C64[j, t] - np.float64(mu[t])
            acc += v * v
        out[j] = np.sqrt(acc)
    return out


@njit(cache=True)
def _gathered_nearest(X, rows, m, mu, Cs, cnorm, xbuf, flat, best, second, arg):
    """Nearest and second-nearest squared distances (and the nearest's index,
    ties to the lowest) of the gathered rows ``rows[:m]``, as
    :func:`~.distances.sqdist_cols` computes distances: the rows shifted by
    ``mu`` in X's dtype, one BLAS product with the shifted centers, clamped
    at zero. Returns the rows' squared norms after the shift (float64),
    which bound the rounding."""
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
    for j in range(k):  # one sweep, across the rows in SIMD lanes (as sqdist_cols)
        cj = np.float64(cnorm[j])
        for r in range(m):
            s = norms[r] + cj - 2.0 * DT[j, r]
            DT[j, r] = s if s > 0.0 else 0.0
            s = np.float64(DT[j, r])  # compared as rounded to X's dtype
            closer = s < best[r]
            second[r] = min(second[r], max(best[r], s))
            best[r] = s if closer else best[r]
            arg[r] = j if closer else arg[r]
    return norms


@njit(cache=True, inline="always")
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


@njit(cache=True)
def _loosening(shift, movers, C64):
    """What loosens the bounds of a pass: ``(still, top, runner, MT)``, the
    shifts with the movers' zeroed, the center that moved most of the others
    and the largest shift but its (for the row whose own center it is), and
    the movers' coordinates transposed (``(d, m)``, float64)."""
    k, d = C64.shape
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
    return still, top, runner, MT


@njit(cache=True, inline="always")
def _own_and_bound(X, i, a, C64, off, lower, still, top, runner, MT, movers, near, rounding, cmax):
    """Row i's squared distance to its label a, float64 from the differences
    (``own``), the rounding error of an expanded squared distance of the row
    (``err``: a kept label or one-hot row is one an unpruned pass would find
    too; the row's shifted norm in it bounded through ``off``, each
    center's distance to the shift ``mu``), and its lower bound on the
    distance to every other center, loosened by the shifts of
    :func:`_loosening` and lowered to its distance to the nearest mover;
    the bound is stored back into ``lower[i]``.
    Returns ``(own, err, loose)``."""
    own = _own_sqdist(X, i, C64, a)
    loose = lower[i] - (runner if a == top else still[top])
    if movers.shape[0]:
        loose = min(loose, np.sqrt(_nearest_mover(X, i, MT, movers, a, near)))
    lower[i] = loose
    reach = np.sqrt(own) + off[a]  # ||x - mu|| <= ||x - c_a|| + ||c_a - mu||
    return own, rounding * (reach * reach + cmax), loose


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
    ``S`` and ``summary`` are those of :func:`~.update.block_pass` at
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
    off = _center_offsets(C64, mu)
    still, top, runner, MT = _loosening(shift, movers, C64)
    nm = movers.shape[0]
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
                own, err, loose = _own_and_bound(
                    X, i, a, C64, off, lower, still, top, runner, MT, movers, near, rounding, cmax
                )
                evaluated += 1 + nm
                mind[i - b] = own
                slack[i - b] = err
                bound = max(loose, half_gap[a])
                if not (bound > 0.0 and own + 2.0 * err < bound * bound):
                    rows[m] = i
                    m += 1
            if m:
                norms = _gathered_nearest(X, rows, m, mu, Cs, cnorm, xbuf, flat, best, second, arg)
                evaluated += m * k
                for r in range(m):
                    i = rows[r]
                    labels[i] = arg[r]
                    if first:
                        slack[i - b] = rounding * (norms[r] + cmax)
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


@njit(cache=True)
def _gathered_rows(X, rows, m, mu, Ct, cnorm, xbuf, out):
    """Squared distances of the gathered rows ``rows[:m]`` to every center
    into ``out[:m]`` (X's dtype), as :func:`~.distances.sqdist_rows` forms
    them: the rows shifted by ``mu``, one BLAS product with the shifted
    centers ``Ct`` (``(d, k)``), clamped at zero. Returns the rows' squared
    norms after the shift (float64), which bound the rounding."""
    d = X.shape[1]
    norms = np.empty(m)
    for r in range(m):
        acc = 0.0
        for t in range(d):
            v = X[rows[r], t] - mu[t]
            xbuf[r, t] = v
            acc += np.float64(v) * v
        norms[r] = acc
    np.dot(xbuf[:m], Ct, out[:m])
    k = Ct.shape[1]
    for r in range(m):
        for j in range(k):
            s = norms[r] + cnorm[j] - 2.0 * out[r, j]
            out[r, j] = s if s > 0.0 else 0.0
    return norms


@njit(cache=True)
def _runner_up(e, win):
    """The smallest entry of row ``e`` other than ``e[win]`` (``inf`` for one entry)."""
    second = np.inf
    for j in range(e.shape[0]):
        if j != win and e[j] < second:
            second = np.float64(e[j])
    return second


@njit(cache=True, parallel=True)
def pruned_soft_stats(
    X, C, w, sigma, mode, labels, lower, shift, half_gap, movers, first, rounding
):
    """One soft pass (softmax or entmax15 at ``sigma > 0``) with the bounds
    of :func:`pruned_hard_stats`: ``(N, S, summary, evaluated)``.

    An assignment gives a center exactly zero responsibility when its squared
    distance exceeds the row's smallest by its reach (entmax15: ``2 sigma``;
    softmax: where ``exp`` underflows, about ``745 sigma``;
    :func:`~.assignment.reach`). A row whose bound on every other center's
    distance (the carried lower bound loosened by the centers' shifts, or
    twice its center's half gap less its own distance) clears its own
    distance by more than the reach, with the rounding margin of
    :func:`pruned_hard_stats`, is one-hot at its label, as an unpruned pass
    finds it: only its own distance is formed, and its distances to the
    ``movers`` (centers that moved far, as there: a split's, left out of the
    loosening and formed in SIMD lanes instead). The other rows are gathered,
    their distances to every center formed as in :func:`~.update.block_pass`
    (one BLAS product), and assigned, folded and scattered as there; that
    also renews their labels and bounds. So at a cold temperature a soft
    pass costs about what a pruned hard pass does.

    ``N`` and ``S`` agree with :func:`~.update.block_pass` to rounding (the
    one-hot rows exactly; a gathered row's distances come from a BLAS product
    of another shape); ``summary`` likewise, its one-hot rows' energies
    summed from the differences. Fixed chunks: the same bits for any number
    of threads. ``evaluated`` counts the row-center distances formed.
    """
    n, d = X.shape
    k = C.shape[0]
    mu, Ct, cnorm = centers_for(X, C)
    C64 = C.astype(np.float64)
    cmax = 0.0
    for j in range(k):
        cmax = max(cmax, np.float64(cnorm[j]))
    off = _center_offsets(C64, mu)
    still, top, runner, MT = _loosening(shift, movers, C64)
    nm = movers.shape[0]
    scale, limit = reach(mode, sigma)
    # A gap above this is out of reach in the computed distances too.
    out_gap = limit / scale * (1.0 + 1e-9)
    cap = soft_rows(k)
    chunks = n_chunks(n, k * (d + 1))
    N_part = np.zeros((chunks, k))
    S_part = np.zeros((chunks, k, d))
    sum_part = np.zeros((chunks, N_SUMMARY))
    counted = np.zeros(chunks, dtype=np.int64)
    step = rows_per_block(X)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        E, R, work, emin, arg, F = soft_buffers(k, cap)
        rows = np.empty(step, dtype=np.int64)
        near = np.empty(nm)
        soft = np.empty(step, dtype=np.int64)
        slack = np.empty(step)
        Rg = np.empty((step, k))
        Xg, Sg = gemm_buffers(X, step, k)
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
                own, err, loose = _own_and_bound(
                    X, i, a, C64, off, lower, still, top, runner, MT, movers, near, rounding, cmax
                )
                evaluated += 1 + nm
                bound = max(loose, 2.0 * half_gap[a] - np.sqrt(own))
                if bound > 0.0 and own + out_gap + 2.0 * err < bound * bound:
                    _fold_one_hot(X, i, w, a, own, N, S, acc)
                else:
                    slack[m] = err
                    rows[m] = i
                    m += 1
            if m == 0:
                continue
            norms = _gathered_rows(X, rows, m, mu, Ct, cnorm, xbuf, D)
            evaluated += m * k
            s = 0  # soft rows among the gathered, assigned in groups of cap
            for r in range(m):
                i = rows[r]
                dmin, win = row_argmin(D[r])
                if first:
                    slack[r] = rounding * (norms[r] + cmax)
                labels[i] = win
                lower[i] = np.sqrt(max(_runner_up(D[r], win) - slack[r], 0.0))
                if one_hot(D[r], dmin, scale, limit):
                    _fold_one_hot(X, i, w, win, dmin, N, S, acc)
                    continue
                g = s % cap
                for j in range(k):
                    E[g, j] = D[r, j] - dmin
                emin[g] = dmin
                arg[g] = win
                soft[s] = i
                s += 1
                if s % cap == 0:
                    assign_block(mode, E, cap, sigma, emin, arg, R, F, work)
                    fold_soft(R, cap, soft, w, arg, emin, F, acc, N, Rg, s - cap)
            if s % cap:
                g = s % cap
                assign_block(mode, E, g, sigma, emin, arg, R, F, work)
                fold_soft(R, g, soft, w, arg, emin, F, acc, N, Rg, s - g)
            if s:
                scatter_rows(X, soft, s, Rg, S, Xg, Sg)
        counted[c] = evaluated
    N_tot = np.zeros(k)
    S_tot = np.zeros((k, d))
    summary = np.zeros(N_SUMMARY)
    evaluated = 0
    for c in range(chunks):
        N_tot += N_part[c]
        S_tot += S_part[c]
        fold_summary(summary, sum_part[c])
        evaluated += counted[c]
    return N_tot, S_tot, summary, evaluated


@njit(cache=True, inline="always")
def _fold_one_hot(X, i, w, a, dmin, N, S, acc):
    """Fold row i, one-hot at center a with squared distance ``dmin``, into
    a chunk's statistics and summary, as :func:`~.update.block_pass` does."""
    wi = w[i] if w.shape[0] else 1.0
    acc[OBJECTIVE] += wi * dmin
    acc[INERTIA] += wi * dmin
    acc[SUPPORT] += wi
    acc[SUPPORT_MAX] = max(acc[SUPPORT_MAX], 1.0)
    N[a] += wi
    add_row(X, i, S, a, wi)
