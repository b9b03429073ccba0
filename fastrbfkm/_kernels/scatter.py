"""Responsibility-weighted scatter of the data around chosen centers.

For center j, ``A_j = sum_i w_i psi(r_ij) (x_i - c_j)(x_i - c_j)^T`` with
``psi(r) = r`` for softmax and ``sqrt(r)`` for entmax15, and
``N_j = sum_i w_i r_ij``. The largest eigenvalue of ``A_j / N_j``, doubled, is
the temperature below which coincident copies of center j split apart
(the critical temperature of docs/conventions.md, generalised from the
all-at-the-mean start to any group of coincident centers).

:func:`center_scatter` forms the ``(m, d, d)`` matrices; for wide data
:func:`scatter_apply` gives their products with one vector per center
without forming them (each a pass over X: the Lanczos iterations of
:mod:`fastrbfkm._principal`).
"""

import numpy as np
from numba import njit, prange

from .assignment import (
    HARD,
    assign_block,
    jacobian_weight,
    load_gaps,
    row_argmin,
    soft_buffers,
)
from .cells import _scatter_cells
from .chunks import chunk_bounds, n_chunks
from .layout import (
    add_row,
    centers_for,
    dims,
    distance_buffers,
    project_row,
    rows_per_block,
    scatter_row,
    sqdist_rows,
)


@njit(cache=True)
def _add_scatter(X, i, C, j, wi, rj, mode, N, S, g, A, diff):
    """Row i's share of center j (``chosen[g]``), responsibility ``rj``:
    ``N[g] += wi rj``, ``S[g] += wi rj x_i`` and ``A[g] += wi psi(rj) (x_i -
    c_j)(x_i - c_j)^T``, the differences in float64 (into ``diff``)."""
    N[g] += wi * rj
    add_row(X, i, S, g, wi * rj)
    coef = wi * jacobian_weight(mode, rj)
    scatter_row(X, i, C, j, coef, A[g], diff)


@njit(cache=True, parallel=True)
def scatters(X, C, w, sigma, mode, chosen, cells):
    """``(N, S, A, N_cells, A_cells)`` for the centers ``C[chosen]``
    (distinct), with responsibilities over all of C (dense X only: CSR rows
    are wide, and take :func:`scatter_apply`); with ``cells``, also ``N``
    and ``A`` at ``mode = HARD`` (the scatter of each center's Voronoi
    cell, the rows' distances formed once), else those two are empty.

    ``N`` is ``(m,)``, ``S`` ``(m, d)`` (``sum_i w_i r_ij x_i``, the
    weighted sums of a soft step) and ``A`` ``(m, d, d)``, float64. ``w`` of length 0
    means unit weights. A row whose responsibilities are one-hot (every
    row at ``mode = HARD``; an entmax15 row with a single center in its
    support) adds ``w_i (x_i - c_j)(x_i - c_j)^T`` to its center's matrix
    with the chunk's other such rows, grouped by center, in BLAS products
    (:func:`~.cells._scatter_cells`), and to its cell's the same; a soft
    row adds its terms one center at a time. Cold annealing passes are
    then mostly matrix products. The library calls it as
    :func:`fastrbfkm._kernels.center_scatter` and
    :func:`fastrbfkm._kernels.scatter_and_cells`."""
    n, d = dims(X)
    k = C.shape[0]
    m = chosen.shape[0]
    mc = m if cells else 0
    mu, Ct, cnorm = centers_for(X, C)
    chunks = n_chunks(n, (m + mc) * (d * d + 1))
    N_part = np.zeros((chunks, m))
    S_part = np.zeros((chunks, m, d))
    A_part = np.zeros((chunks, m, d, d))
    Nh_part = np.zeros((chunks, mc))
    Ah_part = np.zeros((chunks, mc, d, d))
    step = rows_per_block(X)
    hard = mode == HARD or sigma == 0.0
    # Hard rows have one responsibility, 1 at their nearest center: the
    # position of each center among the chosen (-1: not chosen) finds its
    # entry without a sweep over the chosen, with the same arithmetic.
    position = np.full(k, -1, dtype=np.int64)
    for g in range(m - 1, -1, -1):
        position[chosen[g]] = g
    Cg = np.ascontiguousarray(C[chosen])  # the chosen centers, by position
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        diff = np.empty(d)
        Nc = N_part[c]
        Sc = S_part[c]
        Ac = A_part[c]
        E, R, work, emin, arg, F = soft_buffers(0 if hard else k, step)
        one_hot = np.full(stop - start, -1, dtype=np.int32)  # its center's position
        soft_cell = np.full(stop - start if cells else 0, -1, dtype=np.int32)
        for b in range(start, stop, step):
            e = min(stop, b + step)
            sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            if not hard:
                load_gaps(D, e - b, E, emin, arg)
                assign_block(mode, E, e - b, sigma, emin, arg, R, F, work)
            for i in range(b, e):
                wi = w[i] if w.shape[0] else 1.0
                if hard:
                    g = position[row_argmin(D[i - b])[1]]
                elif R[i - b, arg[i - b]] == 1.0:  # a one-hot soft row
                    g = position[arg[i - b]]
                else:
                    for g in range(m):
                        rj = R[i - b, chosen[g]]
                        if rj != 0.0:
                            _add_scatter(X, i, C, chosen[g], wi, rj, mode, Nc, Sc, g, Ac, diff)
                    if cells and position[arg[i - b]] >= 0:
                        Nh_part[c, position[arg[i - b]]] += wi
                        soft_cell[i - start] = position[arg[i - b]]
                    continue
                if g >= 0:
                    Nc[g] += wi
                    add_row(X, i, Sc, g, wi)
                    one_hot[i - start] = g
                    if cells:
                        Nh_part[c, g] += wi
        _scatter_cells(X, w, Cg, one_hot, start, Ac, diff)
        if cells:
            _scatter_cells(X, w, Cg, one_hot, start, Ah_part[c], diff)
            _scatter_cells(X, w, Cg, soft_cell, start, Ah_part[c], diff)
    N = np.zeros(m)
    S = np.zeros((m, d))
    A = np.zeros((m, d, d))
    Nh = np.zeros(mc)
    Ah = np.zeros((mc, d, d))
    for c in range(chunks):
        N += N_part[c]
        S += S_part[c]
        A += A_part[c]
        Nh += Nh_part[c]
        Ah += Ah_part[c]
    return N, S, A, Nh, Ah


@njit(cache=True, parallel=True)
def scatter_apply(X, C, w, sigma, mode, chosen, hard, V, labels):
    """``(N, U)``: ``U[g] = A_g V[g]`` for the centers ``C[chosen]`` (``A_g``
    as in :func:`center_scatter`, never formed), responsibilities over all of C.

    Where ``hard[g]`` is True, ``A_g`` is the scatter of the hard
    responsibilities (the Voronoi cell of the center) whatever ``mode`` is,
    so that one pass serves both kinds. When every ``hard[g]`` is and
    ``labels`` (int32) holds each row's nearest center, the distances are
    not formed (each Lanczos step of a cell is then a pass over X alone);
    ``labels`` of length 0: the pass finds them. ``V`` is ``(m, d)`` float64; ``N`` is
    ``(m,)`` and ``U`` ``(m, d)``, float64. Each row adds ``w_i psi(r_ij)
    ((x_i - c_j) . v) (x_i - c_j)`` (:func:`~.layout.project_row`: for dense
    rows the differences taken in float64; for CSR rows by their nonzeros,
    the multiples of ``c_j`` summed and subtracted once at the end). ``w``
    of length 0 means unit weights. X is dense or CSR.
    """
    n, d = dims(X)
    k = C.shape[0]
    m = chosen.shape[0]
    mu, Ct, cnorm = centers_for(X, C)
    cv = np.zeros(m)  # c_j . v_g
    for g in range(m):
        for t in range(d):
            cv[g] += C[chosen[g], t] * V[g, t]
    chunks = n_chunks(n, m * (d + 1))
    N_part = np.zeros((chunks, m))
    P_part = np.zeros((chunks, m))
    U_part = np.zeros((chunks, m, d))
    step = rows_per_block(X)
    soft = False
    for g in range(m):
        soft = soft or not hard[g]
    given = labels.shape[0] > 0 and not soft
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, 0 if given else k)
        diff = np.empty(d)
        E, R, work, emin, arg, F = soft_buffers(0 if given else k, step)
        for b in range(start, stop, step):
            e = min(stop, b + step)
            if given:
                for i in range(b, e):
                    arg[i - b] = labels[i]
            else:
                sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
                load_gaps(D, e - b, E, emin, arg)
            if soft:
                assign_block(mode, E, e - b, sigma, emin, arg, R, F, work)
            for i in range(b, e):
                wi = w[i] if w.shape[0] else 1.0
                for g in range(m):
                    j = chosen[g]
                    if hard[g]:
                        rj = 1.0 if arg[i - b] == j else 0.0
                    else:
                        rj = R[i - b, j]
                    if rj == 0.0:
                        continue
                    N_part[c, g] += wi * rj
                    coef = wi * jacobian_weight(HARD if hard[g] else mode, rj)
                    P_part[c, g] += project_row(X, i, C, j, V[g], cv[g], coef, U_part[c, g], diff)
    N = np.zeros(m)
    U = np.zeros((m, d))
    P = np.zeros(m)
    for c in range(chunks):
        N += N_part[c]
        P += P_part[c]
        U += U_part[c]
    for g in range(m):
        if P[g] != 0.0:
            for t in range(d):
                U[g, t] -= P[g] * C[chosen[g], t]
    return N, U
