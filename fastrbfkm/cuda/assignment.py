"""Row assignments on the GPU: the twins of :mod:`fastrbfkm._kernels.assignment`,
:mod:`~fastrbfkm._kernels.softmax` and :mod:`~fastrbfkm._kernels.entmax`.

One thread handles one row of energies ``e_j = sign * E[i, j]`` (squared
distances with ``sign = 1``, logits with ``sign = -1`` and ``sigma = 1``) and
computes, in float64, what the CPU row functions compute (the softmax's
``exp`` is the device's, the CPU's a vectorized polynomial within 2 ulp of it):

- hard (or ``sigma == 0``): one-hot at the first minimum;
- softmax: ``r_j = t_j * (1 / sum t)``, ``t_j = exp(-(e_j - emin) / sigma)``
  (0 past the float64 underflow), free energy ``emin - sigma log(sum t)``;
- entmax15: the exact sorted threshold over the candidates
  ``g_j = (e_j - emin) / (2 sigma) <= 1`` (the only entries that can be in the
  support). Up to ``_INSERTION_SORT_MAX`` candidates are sorted by insertion
  and walked as on the CPU; more first try the same certified Newton search
  (summing in the same column order as the CPU); if it cannot certify, an
  exact rank-based walk gives the sorted walk's threshold without sorting.

The scalar steps (``half_gap``, the sorted walk, the Newton step, the
summary fold) are not written here: they are the CPU's own ``@njit``
functions, which numba compiles as device functions where a kernel calls them.

The responsibilities are not kept: a second sweep over the row recomputes
each ``r_j`` from ``e_j`` and writes it out, so the output may overwrite the
energies in place.
"""

from __future__ import annotations

import math

import numba
from numba import cuda

from .._kernels.assignment import ENTMAX15, HARD, SOFTMAX
from .._kernels.entmax import (
    _INSERTION_SORT_MAX,
    _NEWTON_STEPS,
    half_gap,
    insertion_sort,
    newton_next,
    set_threshold,
    sorted_walk,
    walk_step,
)
from .._kernels.softmax import EXP_UNDERFLOW
from .._kernels.update import (
    INERTIA,
    N_SUMMARY,
    OBJECTIVE,
    OFF_WINNER_MAX,
    SOFT,
    SUPPORT,
    SUPPORT_MAX,
    fold_summary,
)
from .config import ROW_THREADS


@cuda.jit(device=True)
def energy(E, i, j, sign):
    """``sign * E[i, j]`` in float64."""
    return sign * float(E[i, j])


@cuda.jit(device=True)
def row_argmin(E, i, sign):
    """``(min, argmin)`` of row i's energies; ties go to the lowest index."""
    best = energy(E, i, 0, sign)
    arg = 0
    for j in range(1, E.shape[1]):
        e = energy(E, i, j, sign)
        if e < best:
            best = e
            arg = j
    return best, arg


@cuda.jit(device=True)
def softmax_term(e, emin, sigma):
    """``exp(-(e - emin) / sigma)``, skipping the call where it is exactly 0."""
    a = (e - emin) / sigma
    return math.exp(-a) if a < EXP_UNDERFLOW else 0.0


@cuda.jit(device=True)
def sorted_threshold(g, m):
    """Insertion-sort the candidates ``g[:m]`` (``m <= _INSERTION_SORT_MAX``)
    and walk them, as :func:`fastrbfkm._kernels.entmax._sorted_threshold` does."""
    insertion_sort(g, m)
    return sorted_walk(g, m)


@cuda.jit(device=True)
def newton_threshold(E, i, sign, emin, sigma):
    """:func:`fastrbfkm._kernels.entmax._newton_threshold` over the row's
    candidates in column order; returns ``(tau, certified)``.

    The CPU search keeps the row's half-logits in a work array and checks each
    iterate during the next vectorized pass; a GPU thread has no k-long work
    array, so it recomputes them from E and checks at once. The steps
    themselves are the CPU's (:func:`~fastrbfkm._kernels.entmax.set_threshold`,
    :func:`~fastrbfkm._kernels.entmax.newton_next`)."""
    k = E.shape[1]
    tau = -1.0
    for _ in range(_NEWTON_STEPS):
        count = 0.0
        s1 = 0.0
        s2 = 0.0
        vmin = 0.0
        for j in range(k):
            g = half_gap(energy(E, i, j, sign), emin, sigma)
            if g <= 1.0:
                v = -g
                if v > tau:
                    count += 1.0
                    s1 += v
                    s2 += v * v
                    vmin = min(vmin, v)
        tau_s = set_threshold(count, s1, s2)
        if tau_s > -math.inf and vmin >= tau_s:
            return tau_s, True
        new = newton_next(tau, count, s1, s2)
        if not new > tau:
            break
        tau = new
    return tau, False


@cuda.jit(device=True)
def prefix_moments(E, i, sign, emin, sigma, j):
    """The sorted walk's step at candidate j without sorting: over the
    candidates that precede or are j in a stable descending order of
    ``v = -g``, ``(count, mean, delta, in_support)``."""
    vj = -half_gap(energy(E, i, j, sign), emin, sigma)
    count = 0
    s1 = 0.0
    s2 = 0.0
    for col in range(E.shape[1]):
        g = half_gap(energy(E, i, col, sign), emin, sigma)
        if g <= 1.0:
            v = -g
            if v > vj or (v == vj and col <= j):
                count += 1
                s1 += v
                s2 += v * v
    mean, delta, ok = walk_step(count, s1, s2, vj)
    return count, mean, delta, ok


@cuda.jit(device=True)
def rank_threshold(E, i, sign, emin, sigma):
    """The sorted walk's threshold by ranks (quadratic in the candidates):
    the walk stops at its first failing step, so the support size is the
    largest passing step below the smallest failing one."""
    k = E.shape[1]
    first_fail = k + 1
    for j in range(k):
        if half_gap(energy(E, i, j, sign), emin, sigma) <= 1.0:
            count, mean, delta, ok = prefix_moments(E, i, sign, emin, sigma, j)
            if not ok and count < first_fail:
                first_fail = count
    best = 0
    mean_star = 0.0
    delta_star = 1.0
    for j in range(k):
        if half_gap(energy(E, i, j, sign), emin, sigma) <= 1.0:
            count, mean, delta, ok = prefix_moments(E, i, sign, emin, sigma, j)
            if ok and best < count < first_fail:
                best = count
                mean_star = mean
                delta_star = delta
    return mean_star - math.sqrt(max(delta_star, 0.0))


@cuda.jit(device=True)
def entmax15_threshold(E, i, sign, emin, sigma, buf):
    """The entmax15 threshold ``tau`` of row i (in units of the half-logits
    shifted by the row's maximum); ``buf`` holds ``_INSERTION_SORT_MAX`` floats."""
    m = 0
    for j in range(E.shape[1]):
        g = half_gap(energy(E, i, j, sign), emin, sigma)
        if g <= 1.0:
            if m < _INSERTION_SORT_MAX:
                buf[m] = g
            m += 1
    if m <= _INSERTION_SORT_MAX:
        return sorted_threshold(buf, m)
    tau, certified = newton_threshold(E, i, sign, emin, sigma)
    if certified:
        return tau
    return rank_threshold(E, i, sign, emin, sigma)


@cuda.jit(device=True)
def responsibility(kind, e, emin, sigma, param, is_winner):
    """``r_j`` from ``e_j``: ``param`` is ``1 / sum t`` (softmax) or ``tau``
    (entmax15); NaN for an unregistered ``kind``."""
    if kind == SOFTMAX:
        return softmax_term(e, emin, sigma) * param
    if kind == ENTMAX15:
        q = -half_gap(e, emin, sigma) - param
        return q * q if q > 0.0 else 0.0
    if kind == HARD:
        return 1.0 if is_winner else 0.0
    return math.nan


@cuda.jit
def assign_rows(E, i0, i1, sign, sigma, mode, w, out, weighted, partial, p0):
    """Responsibilities of rows ``i0 <= i < i1`` (row ``i - i0`` of E and out).

    ``out[i - i0, j] = s_i r_ij`` with ``s_i = w_i`` when ``weighted`` and 1
    otherwise (``out`` may be ``E``). When ``partial`` is not empty, block b
    writes the summary of its rows (the entries of
    :func:`fastrbfkm._kernels.block_stats`, summed in row order) to
    ``partial[p0 + b]``. ``w`` of length 0 means unit weights.

    Grid ``ceil((i1 - i0) / ROW_THREADS)``, block ``ROW_THREADS``.
    """
    buf = cuda.local.array(_INSERTION_SORT_MAX, numba.float64)
    rows = cuda.shared.array((ROW_THREADS, N_SUMMARY), numba.float64)
    t = cuda.threadIdx.x
    i = i0 + cuda.blockIdx.x * ROW_THREADS + t
    for m in range(N_SUMMARY):
        rows[t, m] = 0.0
    if i < i1:
        r = i - i0
        emin, arg = row_argmin(E, r, sign)
        kind = mode
        param = 0.0
        free = emin
        if mode == HARD or sigma == 0.0:
            kind = HARD
        elif mode == SOFTMAX:
            total = 0.0
            for j in range(E.shape[1]):
                total += softmax_term(energy(E, r, j, sign), emin, sigma)
            param = 1.0 / total
            free = emin - sigma * math.log(total)
        elif mode == ENTMAX15:
            param = entmax15_threshold(E, r, sign, emin, sigma, buf)
        else:  # an unregistered code: NaN responsibilities (responsibility)
            free = math.nan
        wi = w[i] if w.shape[0] > 0 else 1.0
        scale = wi if weighted else 1.0
        spent = 0.0  # entmax15: sum r (e - emin)
        power = 0.0  # entmax15: sum r^{3/2}
        support = 0
        off = 0.0
        for j in range(E.shape[1]):
            e = energy(E, r, j, sign)
            rj = responsibility(kind, e, emin, sigma, param, j == arg)
            out[r, j] = scale * rj
            if rj != 0.0:
                support += 1
                if j != arg:
                    off += rj
                if kind == ENTMAX15:
                    spent += rj * (e - emin)
                    power += rj * (-half_gap(e, emin, sigma) - param)
        if kind == ENTMAX15:
            free = emin + spent - sigma * (4.0 / 3.0) * (1.0 - power)
        rows[t, OBJECTIVE] = wi * free
        rows[t, INERTIA] = wi * emin
        rows[t, SUPPORT] = wi * support
        rows[t, SOFT] = wi if support > 1 else 0.0
        rows[t, OFF_WINNER_MAX] = off
        rows[t, SUPPORT_MAX] = support
    if partial.shape[0] > 0:
        cuda.syncthreads()
        if t == 0:
            for u in range(1, ROW_THREADS):
                fold_summary(rows[0], rows[u])
            for m in range(N_SUMMARY):
                partial[p0 + cuda.blockIdx.x, m] = rows[0, m]
