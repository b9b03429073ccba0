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


@njit(cache=True)
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
def row_norms(X):
    """Nothing: dense distances to seeds are summed differences."""
    return np.empty(0)


@njit(cache=True)
def seed_rows(X, index):
    """``(T, tnorm)``: the rows ``X[index]`` (copied) and no norms."""
    T = np.empty((index.shape[0], X.shape[1]), dtype=X.dtype)
    for r in range(index.shape[0]):
        for t in range(X.shape[1]):
            T[r, t] = X[index[r], t]
    return T, np.empty(0)


@njit(cache=True)
def to_seed(X, i, norms, T, tnorm, r):
    """``||X[i] - T[r]||^2`` in float64, summed from the differences."""
    return row_sqdist(X, i, T, r)


#: Padding of a row of :func:`seed_distances`'s transposed block (float64
#: entries): rows a power of two apart (256 rows: 2 KiB) put the loads of
#: ``xt`` at the same 4 KiB offsets as the stores to ``out``, false
#: store-to-load dependencies that took about twice the time.
SEED_PAD = 8


@njit(cache=True)
def seed_buffers(X, trials):
    """Per-chunk work arrays of :func:`seed_distances`: ``(xt, out)``, the
    block transposed ``(d, block_rows(d) + SEED_PAD)`` and the distances
    ``(trials, block_rows(d))``, float64."""
    rows = block_rows(X.shape[1])
    return np.empty((X.shape[1], rows + SEED_PAD)), np.empty((trials, rows))


@njit(cache=True)
def seed_distances(X, start, stop, norms, T, tnorm, r0, r1, xt, out):
    """:func:`to_seed` of rows ``start:stop`` (at most ``block_rows(d)``)
    to the candidates ``T[r0:r1]``, into ``out[:r1-r0, :stop-start]``.

    The same float64 operations in the same order as :func:`to_seed` (so
    the same bits), but with the block transposed into ``xt`` so that every
    step runs across the rows in SIMD lanes (summed over t a row at a time,
    the sum is a chain in strict floating point that does not vectorize).
    The features go outermost so that a row of ``xt`` is read from L1 for
    all the candidates. ``xt``, ``out`` from :func:`seed_buffers`.
    """
    d = X.shape[1]
    m = stop - start
    for i in range(m):
        for t in range(d):
            xt[t, i] = X[start + i, t]
    for r in range(r1 - r0):
        for i in range(m):
            out[r, i] = 0.0
    for t in range(d):
        for r in range(r1 - r0):
            c = np.float64(T[r0 + r, t])
            for i in range(m):
                diff = xt[t, i] - c
                out[r, i] += diff * diff
