"""Rows of a sparse matrix (CSR) for the kernels, and their per-row steps.

:class:`CSR` holds the three arrays of a canonical scipy CSR matrix (column
indices sorted within each row, no duplicates) as a named tuple, which numba
passes to a kernel as it does an array. The kernels are the same for dense
and CSR rows: the few steps that touch X itself are chosen by layout in
:mod:`.layout`, and those for CSR rows are here. They work from the
nonzeros only; the centers are dense.

Distances are ``||x||^2 - 2 x.c + ||c||^2`` clamped at zero, as for dense
rows, but around the origin (shifting by the centers' mean would make the
rows dense): the cross terms of a row are, for each of its nonzeros
``x_t``, ``x_t`` times the centers' row t of ``Ct`` (``(d, k)``), a
contiguous k-vector, so a row costs ``nnz * k``.
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from .chunks import BLOCK_ROWS
from .distances import prepare_centers


class CSR(NamedTuple):
    """A CSR matrix's arrays, as the kernels take them.

    ``indptr`` may be a slice of a larger matrix's (a block of its rows:
    :func:`row_block`); it indexes ``data`` and ``indices`` absolutely.
    """

    data: np.ndarray  # (nnz,) float32 or float64
    indices: np.ndarray  # (nnz,) int32, sorted within each row
    indptr: np.ndarray  # (n + 1,) int64
    n_cols: int  # not a shape tuple: numba's parallel loops refuse tuple fields

    @property
    def shape(self) -> tuple[int, int]:
        return self.indptr.shape[0] - 1, self.n_cols

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1] - self.indptr[0])


def row_block(X: CSR, start: int, stop: int) -> CSR:
    """Rows ``start:stop`` of X, sharing its arrays."""
    return CSR(X.data, X.indices, X.indptr[start : stop + 1], X.n_cols)


@njit(cache=True)
def dense_rows(X, index, out):
    """``out[r] = X[index[r]]`` densified (``out`` zeros, ``(m, d)``)."""
    for r in range(index.shape[0]):
        i = index[r]
        for p in range(X.indptr[i], X.indptr[i + 1]):
            out[r, X.indices[p]] = X.data[p]


@njit(cache=True)
def row_distances(X, i, Ct, cnorm, out):
    """Squared distances of row i to the centers (``Ct`` ``(d, k)``, not
    shifted; ``cnorm`` their squared norms) into ``out`` (k, X's dtype)."""
    k = Ct.shape[1]
    for j in range(k):
        out[j] = 0.0
    norm = 0.0
    for p in range(X.indptr[i], X.indptr[i + 1]):
        v = X.data[p]
        norm += np.float64(v) * v
        c = Ct[X.indices[p]]
        for j in range(k):
            out[j] += v * c[j]
    for j in range(k):
        s = norm + cnorm[j] - 2.0 * out[j]
        out[j] = s if s > 0.0 else 0.0


@njit(cache=True)
def transfer_buffer(X, k):
    """The clusters' sums transposed, ``(d, k)``: a row's products with all k
    sums read k contiguous values at each of its nonzeros."""
    return np.zeros((X.n_cols, k))


@njit(cache=True)
def sums_transposed(X, S, T):
    """``T = S.T``."""
    for j in range(S.shape[0]):
        for t in range(S.shape[1]):
            T[t, j] = S[j, t]


@njit(cache=True)
def mean_sqdists(X, i, T, C, N, snorm, out):
    """``out[j] = ||X[i] - S[j] / N[j]||^2`` in float64, clamped at zero, from
    the row's nonzeros, the transposed sums ``T`` and the sums' squared
    norms ``snorm`` (``C`` unused: the means are not kept while rows move,
    see :func:`move_row`); the row's squared norm for a cluster without mass."""
    k = N.shape[0]
    for j in range(k):
        out[j] = 0.0
    norm = 0.0
    for p in range(X.indptr[i], X.indptr[i + 1]):
        v = np.float64(X.data[p])
        norm += v * v
        column = T[X.indices[p]]
        for j in range(k):
            out[j] += v * column[j]
    for j in range(k):
        if N[j] > 0.0:
            s = norm - 2.0 * out[j] / N[j] + snorm[j] / (N[j] * N[j])
            out[j] = s if s > 0.0 else 0.0
        else:
            out[j] = norm


@njit(cache=True)
def move_row(X, i, S, T, C, N, snorm, a, b, wi):
    """Move row i (weight wi) from cluster a to b: the sums S and T, the
    masses N and the sums' squared norms, at the cost of the row's nonzeros
    (updating the means ``C`` would cost the width of the data)."""
    dot_a = 0.0
    dot_b = 0.0
    norm = 0.0
    for p in range(X.indptr[i], X.indptr[i + 1]):
        v = np.float64(X.data[p])
        t = X.indices[p]
        dot_a += v * T[t, a]
        dot_b += v * T[t, b]
        norm += v * v
        T[t, a] -= wi * v
        T[t, b] += wi * v
    snorm[a] += wi * (wi * norm - 2.0 * dot_a)
    snorm[b] += wi * (wi * norm + 2.0 * dot_b)
    N[a] -= wi
    N[b] += wi
    add_row(X, i, S, a, -wi)
    add_row(X, i, S, b, wi)


@njit(cache=True)
def nearest_of(row):
    """``(minimum, second minimum, argmin)`` of a row (ties to the lowest index)."""
    b = np.inf
    s = np.inf
    a = 0
    for j in range(row.shape[0]):
        v = row[j]
        if v < b:
            s = b
            b = v
            a = j
        elif v < s:
            s = v
    return b, s, a


@njit(cache=True)
def sqdist_rows(X, start, stop, mu, Ct, cnorm, xbuf, out):
    """Squared distances of rows ``start:stop`` into ``out[:stop-start]``
    (``mu`` is zero and ``xbuf`` unused: the signature of the dense step)."""
    for r in range(stop - start):
        row_distances(X, start + r, Ct, cnorm, out[r])


@njit(cache=True)
def sqdist_cols(X, start, stop, mu, Ct, cnorm, xbuf, D, best, second, arg):
    """Each row's nearest center and squared distance into ``arg`` and
    ``best``, and the second-smallest into ``second`` unless it is empty;
    here ``Ct`` is ``(d, k)`` and ``D`` a ``(1, k)`` work row
    (:func:`column_buffers`)."""
    for r in range(stop - start):
        row_distances(X, start + r, Ct, cnorm, D[0])
        b, s, a = nearest_of(D[0])
        best[r] = b
        arg[r] = a
        if second.shape[0] > 0:
            second[r] = s


@njit(cache=True)
def center_norms(Ct):
    """Squared norms of the centers held as the columns of ``Ct``."""
    d, k = Ct.shape
    cnorm = np.zeros(k)
    for t in range(d):
        for j in range(k):
            cnorm[j] += np.float64(Ct[t, j]) * Ct[t, j]
    return cnorm


@njit(cache=True)
def nearest_rows(X, start, stop, mu, Ct, xt, dist, best, second, arg):
    """The dense step for tiny ``d * k``; CSR rows never take that path
    (:func:`is_direct`), so this only has to be right, not fast."""
    cnorm = center_norms(Ct)
    row = np.empty(Ct.shape[1], dtype=best.dtype)
    for r in range(stop - start):
        row_distances(X, start + r, Ct, cnorm, row)
        best[r], second[r], arg[r] = nearest_of(row)


@njit(cache=True)
def direct_row(X, i, mu, Ct, out):
    """The dense step for tiny ``d * k``; see :func:`nearest_rows`."""
    row_distances(X, i, Ct, center_norms(Ct), out)


@njit(cache=True, inline="always")
def add_row(X, i, S, j, coef):
    """``S[j] += coef * X[i]``."""
    for p in range(X.indptr[i], X.indptr[i + 1]):
        S[j, X.indices[p]] += coef * X.data[p]


@njit(cache=True)
def scatter_rows(X, rows, m, Rg, S, Xg, Sg):
    """``S += sum_s Rg[s]^T X[rows[s]]`` over the first ``m`` gathered rows,
    over their nonzero coefficients and entries (``Xg``, ``Sg`` unused)."""
    k = S.shape[0]
    for s in range(m):
        i = rows[s]
        for j in range(k):
            coef = Rg[s, j]
            if coef != 0.0:
                add_row(X, i, S, j, coef)


@njit(cache=True)
def project_row(X, i, C, j, v, cv, coef, U, diff):
    """Add ``coef ((x_i - c_j) . v) x_i`` to ``U`` and return ``coef ((x_i -
    c_j) . v)``, the multiple of ``c_j`` still to subtract from ``U`` (the
    caller subtracts the total once); ``cv`` is ``c_j . v``, ``diff`` unused."""
    along = -cv
    for p in range(X.indptr[i], X.indptr[i + 1]):
        along += X.data[p] * v[X.indices[p]]
    along *= coef
    for p in range(X.indptr[i], X.indptr[i + 1]):
        U[X.indices[p]] += along * X.data[p]
    return along


@njit(cache=True)
def scatter_row(X, i, C, j, coef, A, diff):
    """Never called: CSR rows are wide, and their scatter is never formed
    (:func:`~.scatter.scatter_apply` applies it instead); here so that a
    kernel that forms it for dense rows compiles for CSR ones."""
    raise ValueError("the d x d scatter of CSR rows is never formed")


@njit(cache=True)
def cell_buffers(X):
    """Empty: :func:`scatter_cell` never runs on CSR rows."""
    return np.empty((0, 0)), np.empty((0, 0)), np.empty((0, 0))


@njit(cache=True)
def scatter_cell(X, rows, w, C, j, A, diff, D, Dw, G):
    """Never called, as :func:`scatter_row`."""
    raise ValueError("the d x d scatter of CSR rows is never formed")


@njit(cache=True)
def seed_norms(X):
    """``(mu, norms)``: no shift (empty) and the rows' squared norms, float64."""
    n = X.indptr.shape[0] - 1
    norms = np.zeros(n)
    for i in range(n):
        for p in range(X.indptr[i], X.indptr[i + 1]):
            norms[i] += np.float64(X.data[p]) * X.data[p]
    return np.empty(0), norms


@njit(cache=True)
def seed_rows(X, index, mu):
    """``(T, tnorm)``: the rows ``X[index]`` densified (float64) and their
    squared norms (``mu`` unused: CSR rows are not shifted)."""
    T = np.zeros((index.shape[0], X.n_cols))
    tnorm = np.zeros(index.shape[0])
    for r in range(index.shape[0]):
        i = index[r]
        for p in range(X.indptr[i], X.indptr[i + 1]):
            T[r, X.indices[p]] = X.data[p]
            tnorm[r] += np.float64(X.data[p]) * X.data[p]
    return T, tnorm


@njit(cache=True)
def to_seed(X, i, mu, norms, T, tnorm, r):
    """``||X[i] - T[r]||^2`` in float64 as ``||x||^2 - 2 x.t + ||t||^2``
    (clamped at zero), the cross term gathered over the row's nonzeros."""
    cross = 0.0
    for p in range(X.indptr[i], X.indptr[i + 1]):
        cross += X.data[p] * T[r, X.indices[p]]
    s = norms[i] + tnorm[r] - 2.0 * cross
    return s if s > 0.0 else 0.0


@njit(cache=True)
def seed_buffers(X, trials):
    """``(buf, work, out)``: no copy of the rows, no work array,
    ``(trials, BLOCK_ROWS)`` distances."""
    return np.empty((0, X.n_cols)), np.empty((0, 0)), np.empty((trials, BLOCK_ROWS))


@njit(cache=True)
def seed_distances(X, start, stop, mu, norms, T, tnorm, buf, work, out):
    """:func:`to_seed` of rows ``start:stop`` to every candidate (row) of
    ``T`` into ``out[:, :stop-start]``, row by row (``buf``, ``work`` unused)."""
    for r in range(T.shape[0]):
        for i in range(stop - start):
            out[r, i] = to_seed(X, start + i, mu, norms, T, tnorm, r)


@njit(cache=True)
def distance_buffers(X, k):
    """``(xbuf, D)``: no copy of the rows, a ``(BLOCK_ROWS, k)`` block."""
    return (
        np.empty((0, X.n_cols), dtype=X.data.dtype),
        np.empty((BLOCK_ROWS, k), dtype=X.data.dtype),
    )


@njit(cache=True)
def nearest_buffers(X):
    """``(xt, dist, best, second, arg)`` for ``BLOCK_ROWS`` rows (``xt`` empty)."""
    block = np.empty(BLOCK_ROWS, dtype=X.data.dtype)
    return (
        np.empty((X.n_cols, 0), dtype=X.data.dtype),
        block,
        np.empty_like(block),
        np.empty_like(block),
        np.empty(BLOCK_ROWS, dtype=np.int64),
    )


@njit(cache=True)
def column_buffers(X, Ct):
    """``(Ct, D)``: :func:`sqdist_cols` takes the centers as ``Ct`` itself
    and a ``(1, k)`` work row."""
    return Ct, np.empty((1, Ct.shape[1]), dtype=X.data.dtype)


@njit(cache=True)
def gemm_buffers(X, rows, k):
    """No gathered copy of the rows: the scatter goes by nonzeros."""
    return np.empty((0, X.n_cols)), np.empty((0, 0))


@njit(cache=True)
def dims(X):
    """``(n, d)``."""
    return X.indptr.shape[0] - 1, X.n_cols


@njit(cache=True)
def rows_per_block(X):
    """Rows worked together: ``BLOCK_ROWS`` (no copy of the rows is made)."""
    return BLOCK_ROWS


@njit(cache=True)
def is_direct(X, k):
    """CSR rows never sum differences over every feature."""
    return False


@njit(cache=True)
def centers_for(X, C):
    """``(mu, Ct, cnorm)`` not shifted (``mu`` zero): rows stay sparse."""
    return prepare_centers(C, False)
