"""The per-row steps of the kernels for dense rows, besides the distances
(:mod:`.distances`): their twins for CSR rows are in :mod:`.sparse`, and
:mod:`.layout` chooses between the two."""

import numpy as np
from numba import njit

from .chunks import block_rows
from .distances import DIRECT_MAX, prepare_centers, row_sqdist


@njit(cache=True)
def dims(X):
    """``(n, d)``."""
    return X.shape


@njit(cache=True)
def rows_per_block(X):
    """Rows worked together (:func:`~.chunks.block_rows` of d)."""
    return block_rows(X.shape[1])


@njit(cache=True)
def is_direct(X, k):
    """Whether distances are summed differences (tiny ``d * k``)."""
    return X.shape[1] * k <= DIRECT_MAX


@njit(cache=True)
def centers_for(X, C):
    """``(mu, Ct, cnorm)`` of :func:`~.distances.prepare_centers`, shifted
    by the centers' mean."""
    return prepare_centers(C, True)


@njit(cache=True, inline="always")
def add_row(X, i, S, j, coef):
    """``S[j] += coef * X[i]``."""
    for t in range(X.shape[1]):
        S[j, t] += coef * X[i, t]


@njit(cache=True)
def transfer_buffer(X, k):
    """The transposed sums a CSR row's transfers keep (none for dense rows)."""
    return np.zeros((0, 0))


@njit(cache=True)
def sums_transposed(X, S, T):
    """Fill the transposed sums ``T`` from ``S`` (none for dense rows)."""


@njit(cache=True)
def mean_sqdists(X, i, T, C, N, snorm, out):
    """``out[j] = ||X[i] - C[j]||^2`` in float64, summed from the
    differences (``T``, the masses ``N`` and ``snorm`` unused)."""
    for j in range(C.shape[0]):
        out[j] = row_sqdist(X, i, C, j)


@njit(cache=True)
def move_row(X, i, S, T, C, N, snorm, a, b, wi):
    """Move row i (weight wi) from cluster a to b: the sums S, the masses N
    and the means C of both (``T`` and ``snorm`` unused)."""
    N[a] -= wi
    N[b] += wi
    add_row(X, i, S, a, -wi)
    add_row(X, i, S, b, wi)
    for t in range(X.shape[1]):
        C[a, t] = S[a, t] / N[a]
        C[b, t] = S[b, t] / N[b]


#: A block's gathered soft rows, from this many on, add to ``S`` as one
#: matrix product; fewer are scattered row by row.
GEMM_MIN_ROWS = 8


@njit(cache=True)
def gemm_buffers(X, rows, k):
    """Work arrays of :func:`scatter_rows` for ``rows`` gathered rows:
    ``(Xg, Sg)``, float64 (empty when ``rows`` is 0)."""
    return np.empty((rows, X.shape[1])), np.empty((k, X.shape[1]) if rows else (0, 0))


@njit(cache=True)
def scatter_rows(X, rows, m, Rg, S, Xg, Sg):
    """``S += sum_s Rg[s]^T X[rows[s]]`` over the first ``m`` gathered rows
    (weighted responsibilities): one float64 BLAS product from
    ``GEMM_MIN_ROWS`` rows on (the rows copied into ``Xg``; ``Sg`` is its
    output), else row by row over the nonzero responsibilities. float64 for
    float32 data too: the statistics must not depend on how the rows were
    split into blocks beyond float64 rounding."""
    k, d = S.shape
    if m < GEMM_MIN_ROWS:
        for s in range(m):
            for j in range(k):
                coef = Rg[s, j]
                if coef != 0.0:
                    add_row(X, rows[s], S, j, coef)
        return
    for s in range(m):
        for t in range(d):
            Xg[s, t] = X[rows[s], t]
    np.dot(Rg[:m].T, Xg[:m], Sg)
    for j in range(k):
        for t in range(d):
            S[j, t] += Sg[j, t]


@njit(cache=True)
def project_row(X, i, C, j, v, cv, coef, U, diff):
    """Add ``coef ((x_i - c_j) . v) (x_i - c_j)`` to ``U``, the differences
    in float64 (into ``diff``); return 0.0, the multiple of ``c_j`` left to
    subtract (``cv``, ``c_j . v``, is not used: see the CSR twin)."""
    along = 0.0
    for t in range(X.shape[1]):
        diff[t] = np.float64(X[i, t]) - C[j, t]
        along += diff[t] * v[t]
    along *= coef
    for t in range(X.shape[1]):
        U[t] += along * diff[t]
    return 0.0


@njit(cache=True)
def scatter_row(X, i, C, j, coef, A, diff):
    """``A += coef (x_i - c_j)(x_i - c_j)^T``, the differences in float64
    (into ``diff``)."""
    d = X.shape[1]
    for t in range(d):
        diff[t] = np.float64(X[i, t]) - C[j, t]
    for s in range(d):
        v = coef * diff[s]
        for t in range(d):
            A[s, t] += v * diff[t]


#: Rows of one cell that :func:`scatter_cell` gathers for one BLAS product.
CELL_PIECE = 256


@njit(cache=True)
def cell_buffers(X):
    """Work arrays of :func:`scatter_cell`: ``(D, Dw, G)``, float64."""
    d = X.shape[1]
    return np.empty((CELL_PIECE, d)), np.empty((CELL_PIECE, d)), np.empty((d, d))


@njit(cache=True)
def scatter_cell(X, rows, w, C, j, A, diff, D, Dw, G):
    """``A += sum_i w_i (x_i - c_j)(x_i - c_j)^T`` over the rows ``rows``
    (all in cell j; ``w`` of length 0: unit weights): the differences, in
    float64, gathered :data:`CELL_PIECE` rows at a time into one BLAS
    product each, from ``GEMM_MIN_ROWS`` rows on; fewer go row by row
    (:func:`scatter_row`). The same sum as :func:`scatter_row` over the
    rows, in another order: a d x d update a row is a matrix-vector
    product's arithmetic, a piece's is a matrix product's."""
    m = rows.shape[0]
    if m < GEMM_MIN_ROWS:
        for s in range(m):
            scatter_row(X, rows[s], C, j, w[rows[s]] if w.shape[0] else 1.0, A, diff)
        return
    d = X.shape[1]
    for first in range(0, m, CELL_PIECE):
        size = min(CELL_PIECE, m - first)
        for s in range(size):
            i = rows[first + s]
            wi = w[i] if w.shape[0] else 1.0
            for t in range(d):
                v = np.float64(X[i, t]) - C[j, t]
                D[s, t] = v
                Dw[s, t] = wi * v
        np.dot(Dw[:size].T, D[:size], G)
        for s in range(d):
            for t in range(d):
                A[s, t] += G[s, t]


#: Up to this many features, a dense row's distances to the seeding's
#: candidates are summed float64 differences (:func:`seed_distances`), exact;
#: from more on, the expansion with one float64 BLAS product per block.
SEED_DIRECT_MAX_D = 8


@njit(cache=True)
def seed_norms(X):
    """``(mu, norms)`` for greedy k-means++: the rows' mean and the squared
    norms of the rows shifted by it, float64; both empty for rows of at
    most :data:`SEED_DIRECT_MAX_D` features (summed differences need
    neither)."""
    n, d = X.shape
    if d <= SEED_DIRECT_MAX_D:
        return np.empty(0), np.empty(0)
    mu = np.zeros(d)
    for i in range(n):
        for t in range(d):
            mu[t] += X[i, t]
    mu /= max(n, 1)
    norms = np.empty(n)
    for i in range(n):
        acc = 0.0
        for t in range(d):
            v = X[i, t] - mu[t]
            acc += v * v
        norms[i] = acc
    return mu, norms


@njit(cache=True)
def seed_rows(X, index, mu):
    """``(T, tnorm)``: the rows ``X[index]`` minus ``mu``, transposed to
    ``(d, len(index))``, float64, and their squared norms (as given and no
    norms when ``mu`` is empty)."""
    m, d = index.shape[0], X.shape[1]
    T = np.empty((d, m))
    if mu.shape[0] == 0:
        for r in range(m):
            for t in range(d):
                T[t, r] = X[index[r], t]
        return T, np.empty(0)
    tnorm = np.empty(m)
    for r in range(m):
        acc = 0.0
        for t in range(d):
            v = X[index[r], t] - mu[t]
            T[t, r] = v
            acc += v * v
        tnorm[r] = acc
    return T, tnorm


@njit(cache=True)
def _seed_rounding(d):
    """A bound on the expansion's rounding, relative to ``||x - mu||^2 +
    ||t||^2``: below it a distance is recomputed from the differences."""
    return 4.0 * (d + 2) * np.finfo(np.float64).eps


@njit(cache=True)
def to_seed(X, i, mu, norms, T, tnorm, r):
    """``||X[i] - c_r||^2`` in float64 for the candidate ``T[:, r]``, row
    by row: summed from the differences when ``mu`` is empty, else ``||x -
    mu||^2 - 2 (x - mu).t + ||t||^2``, or the shifted differences summed
    when that is within rounding of zero (what :func:`seed_distances`
    computes, up to the rounding of the BLAS product)."""
    acc = 0.0
    if mu.shape[0] == 0:
        for t in range(X.shape[1]):
            diff = np.float64(X[i, t]) - T[t, r]
            acc += diff * diff
        return acc
    for t in range(X.shape[1]):
        acc += (X[i, t] - mu[t]) * T[t, r]
    s = norms[i] + tnorm[r] - 2.0 * acc
    if s > _seed_rounding(X.shape[1]) * (norms[i] + tnorm[r]):
        return s
    acc = 0.0  # within rounding of zero: the exact differences of the shifted rows
    for t in range(X.shape[1]):
        diff = (X[i, t] - mu[t]) - T[t, r]
        acc += diff * diff
    return acc


#: Padding of a row of :func:`seed_distances`'s transposed block (float64
#: entries): rows a power of two apart (256 rows: 2 KiB) put the loads of
#: the block at the same 4 KiB offsets as the stores of the distances,
#: false store-to-load dependencies that took about twice the time.
SEED_PAD = 8


@njit(cache=True)
def seed_buffers(X, trials):
    """Per-chunk work arrays of :func:`seed_distances`, float64: ``(buf,
    work, out)``, the distances ``out``, ``(trials, block_rows(d))``; for
    summed differences the block transposed, ``buf``, ``(d, block_rows(d) +
    SEED_PAD)`` (``work`` empty); for the BLAS product the shifted block,
    ``buf``, ``(block_rows(d), d)``, and its product with the candidates,
    ``work``, ``(block_rows(d), trials)``."""
    rows = block_rows(X.shape[1])
    d = X.shape[1]
    out = np.empty((trials, rows))
    if d <= SEED_DIRECT_MAX_D:
        return np.empty((d, rows + SEED_PAD)), np.empty((0, 0)), out
    return np.empty((rows, d)), np.empty((rows, trials)), out


@njit(cache=True)
def seed_distances(X, start, stop, mu, norms, T, tnorm, buf, work, out):
    """:func:`to_seed` of rows ``start:stop`` (at most ``block_rows(d)``)
    to every candidate (column) of ``T``, into ``out[:, :stop-start]``.

    With ``mu`` empty (at most :data:`SEED_DIRECT_MAX_D` features), the
    same float64 differences in the same order as :func:`to_seed` (so the
    same bits), the block transposed into ``buf`` so that every step runs
    across the rows in SIMD lanes (summed over t a row at a time, the sum is
    a chain in strict floating point that does not vectorize), the features
    outermost so that a row of the block is read from L1 for all the
    candidates. Otherwise the expansion around ``mu``, its cross terms one
    float64 BLAS product ``work = buf @ T`` of the shifted block (rows past
    ``stop`` zero-filled) and the candidates, both C-ordered (the form
    OpenBLAS's small-matrix kernels take at twice the speed of a transposed
    one): the distances of the data as given up to float64 rounding, at the
    cost of a Lloyd pass's product. A distance within the product's rounding
    of zero (a row equal or nearly equal to the candidate) is summed from
    the shifted differences instead, so that duplicates of a seed are at
    exactly zero and never drawn again, however far from the mean they lie.
    Buffers from :func:`seed_buffers`.
    """
    d = X.shape[1]
    m = stop - start
    trials = T.shape[1]
    if mu.shape[0] == 0:
        for i in range(m):
            for t in range(d):
                buf[t, i] = X[start + i, t]
        for r in range(trials):
            for i in range(m):
                out[r, i] = 0.0
        for t in range(d):
            for r in range(trials):
                c = T[t, r]
                for i in range(m):
                    diff = buf[t, i] - c
                    out[r, i] += diff * diff
        return
    for i in range(m):
        for t in range(d):
            buf[i, t] = X[start + i, t] - mu[t]
    for i in range(m, buf.shape[0]):
        for t in range(d):
            buf[i, t] = 0.0
    np.dot(buf, T, work)
    rounding = _seed_rounding(d)
    close = 0  # distances within rounding of zero: a loop of their own
    for i in range(m):
        ni = norms[start + i]
        for r in range(trials):
            s = ni + tnorm[r] - 2.0 * work[i, r]
            out[r, i] = s
            close += not s > rounding * (ni + tnorm[r])
    if close:
        for i in range(m):
            for r in range(trials):
                if not out[r, i] > rounding * (norms[start + i] + tnorm[r]):
                    # a duplicate of the candidate, or nearly: the exact
                    # differences of the shifted rows
                    s = 0.0
                    for t in range(d):
                        diff = buf[i, t] - T[t, r]
                        s += diff * diff
                    out[r, i] = s
