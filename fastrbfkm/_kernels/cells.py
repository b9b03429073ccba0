"""What the swap search reads of a hard partition, in one pass.

At a Lloyd fixed point the swap search (:func:`fastrbfkm.lloyd.improve_by_swaps`)
ranks its moves by each center's removal cost and each cell's split gain
(mass times principal variance), and judges many moves at once by the
inertia of their cells. All of them come from each row's nearest and
second-nearest squared distances, found here in a single pass over X (three
passes before: one for the costs, one for the scatter, one for the cells).
"""

import numpy as np
from numba import njit, prange

from .chunks import chunk_bounds, n_chunks
from .layout import (
    cell_buffers,
    centers_for,
    column_buffers,
    dims,
    distance_buffers,
    is_direct,
    nearest_buffers,
    nearest_rows,
    rows_per_block,
    scatter_cell,
    sqdist_cols,
)

#: Rows of the ``(3, k)`` per-center sums of :func:`cell_summary`.
COSTS, CELLS, MASS = 0, 1, 2


@njit(cache=True, parallel=True)
def cell_summary(X, C, w, scatter):
    """``(sums, A)`` of the nearest-center partition of X by C.

    ``sums`` is ``(3, k)`` float64: per center, ``sums[COSTS]`` the rise in
    weighted inertia if it were removed and its rows went to their
    second-nearest center (zeros for k = 1), ``sums[CELLS]`` the weighted
    inertia of its cell and ``sums[MASS]`` the cell's weight. With
    ``scatter`` (dense X only), ``A`` is ``(k, d, d)``: each cell's weighted
    scatter around its center, what :func:`~.scatter.scatters` forms
    at ``mode = HARD`` (in another order: a chunk's rows grouped by cell,
    one BLAS product per piece of a cell, :func:`~.dense.scatter_cell`);
    else ``(0, 0, 0)``.

    Nearest and second-nearest distances are found as
    :func:`~.assignment.hard_assign` finds the nearest (the same distances,
    ties to the lowest index). ``w`` of length 0 means unit weights.
    """
    n, d = dims(X)
    k = C.shape[0]
    direct = is_direct(X, k)
    mu, Ct, cnorm = centers_for(X, C)
    dd = d if scatter else 0
    chunks = n_chunks(n, k * (3 + dd * dd))
    part = np.zeros((chunks, 3, k))
    A_part = np.zeros((chunks, k if scatter else 0, dd, dd))
    step = rows_per_block(X)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, _ = distance_buffers(X, 0)
        xt, dist, best, second, nearest = nearest_buffers(X)
        Cs, DT = column_buffers(X, Ct)
        diff = np.empty(dd)
        sums = part[c]
        Ac = A_part[c]
        labels = np.empty(stop - start if scatter else 0, dtype=np.int32)
        for b in range(start, stop, step):
            e = min(stop, b + step)
            if direct:
                nearest_rows(X, b, e, mu, Ct, xt, dist, best, second, nearest)
            else:
                sqdist_cols(X, b, e, mu, Cs, cnorm, xbuf, DT, best, second, nearest)
            for i in range(b, e):
                wi = w[i] if w.shape[0] else 1.0
                j = nearest[i - b]
                dmin = np.float64(best[i - b])
                if k > 1:
                    sums[COSTS, j] += wi * (np.float64(second[i - b]) - dmin)
                sums[CELLS, j] += wi * dmin
                sums[MASS, j] += wi
                if scatter:
                    labels[i - start] = j
        if scatter:
            _scatter_cells(X, w, C, labels, start, Ac, diff)
    total = np.zeros((3, k))
    A = np.zeros((k if scatter else 0, dd, dd))
    for c in range(chunks):
        total += part[c]
        A += A_part[c]
    return total, A


@njit(cache=True)
def _scatter_cells(X, w, C, labels, start, A, diff):
    """Add to ``A`` the scatter of the rows ``start + s`` around their
    centers ``labels[s]`` (rows labelled -1 are left out): the rows grouped
    by cell (a counting sort, in row order within a cell), each cell's in
    BLAS products."""
    k = C.shape[0]
    first = np.zeros(k + 1, dtype=np.int64)
    for s in range(labels.shape[0]):
        if labels[s] >= 0:
            first[labels[s] + 1] += 1
    for j in range(k):
        first[j + 1] += first[j]
    order = np.empty(first[k], dtype=np.int64)
    filled = first[:k].copy()
    for s in range(labels.shape[0]):
        j = labels[s]
        if j >= 0:
            order[filled[j]] = start + s
            filled[j] += 1
    D, Dw, G = cell_buffers(X)
    for j in range(k):
        if first[j + 1] > first[j]:
            scatter_cell(X, order[first[j] : first[j + 1]], w, C, j, A[j], diff, D, Dw, G)
