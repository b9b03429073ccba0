"""Fused responsibilities -> weighted sufficient statistics, one pass over X.

For one temperature and assignment, rows are processed block by block: their
squared distances, their responsibilities and their contributions to
``N_k = sum_i w_i r_ik``, ``S_k = sum_i w_i r_ik x_i`` and the objective are
formed and folded into per-chunk partial sums, which are then reduced in
chunk order. No ``(n, k)`` array is ever held.
"""

import numpy as np
from numba import njit, prange

from .assignment import (
    HARD,
    assign_block,
    one_hot,
    out_of_reach,
    reach,
    row_argmin,
    soft_buffers,
)
from .chunks import BLOCK_ROWS, chunk_bounds, n_chunks
from .dense import GEMM_MIN_ROWS
from .layout import (
    add_row,
    centers_for,
    column_buffers,
    dims,
    direct_row,
    distance_buffers,
    gemm_buffers,
    is_direct,
    nearest_buffers,
    nearest_rows,
    rows_per_block,
    scatter_rows,
    sqdist_cols,
    sqdist_rows,
)

#: Entries of the scalar summary returned by :func:`block_pass`.
OBJECTIVE = 0  # sum_i w_i [sum_k r_ik D_ik - sigma H(r_i)]
INERTIA = 1  # sum_i w_i min_k D_ik at the given centers
SUPPORT = 2  # sum_i w_i |{k : r_ik > 0}|
SOFT = 3  # sum_i w_i [row i is not one-hot]
OFF_WINNER_MAX = 4  # max_i (1 - r_i,winner), computed as the mass off the winner
SUPPORT_MAX = 5  # max_i |{k : r_ik > 0}|
N_SUMMARY = 6
#: The summary entries that fold by maximum; the others are sums.
SUMMARY_MAXIMA = (OFF_WINNER_MAX, SUPPORT_MAX)


@njit(cache=True)
def fold_summary(acc, part):
    """Fold the summary ``part`` into ``acc`` in place: sums, and maxima for
    :data:`SUMMARY_MAXIMA`. The one fold of summaries, also called by the
    CUDA kernels (compiled by numba as a device function there)."""
    for m in range(N_SUMMARY):
        if m == OFF_WINNER_MAX or m == SUPPORT_MAX:
            # not max(): see fastrbfkm._kernels.entmax on CUDA's max
            acc[m] = part[m] if part[m] > acc[m] else acc[m]
        else:
            acc[m] += part[m]


#: Soft rows are gathered, and flushed through :func:`assign_block`, in
#: groups of about this many entries (rows times k), so that the group's
#: float64 work arrays stay in cache.
SOFT_ENTRIES = 1 << 14


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def fold_soft(R, m, rows, w, arg, emin, F, acc, N, Rg, offset):
    """Fold the first ``m`` gathered rows' responsibilities ``R`` into the
    chunk's summary ``acc`` and, when ``Rg`` has rows, into ``N`` and the
    weighted responsibilities ``Rg[offset + s] = w_i R[s]`` that the scatter
    consumes. Every loop over a row is vectorized."""
    k = R.shape[1]
    stats = Rg.shape[0] > 0
    for s in range(m):
        wi = w[rows[offset + s]] if w.shape[0] else 1.0
        acc[OBJECTIVE] += wi * F[s]
        acc[INERTIA] += wi * emin[s]
        support = 0
        total = 0.0
        for j in range(k):
            rj = R[s, j]
            support += rj != 0.0
            total += rj
        if stats:
            out = Rg[offset + s]
            for j in range(k):
                rj = wi * R[s, j]
                out[j] = rj
                N[j] += rj
        acc[SUPPORT] += wi * support
        if support > 1:
            acc[SOFT] += wi
        # the mass off the winner (the sum of the others, up to rounding)
        acc[OFF_WINNER_MAX] = max(acc[OFF_WINNER_MAX], total - R[s, arg[s]])
        acc[SUPPORT_MAX] = max(acc[SUPPORT_MAX], support)


@njit(cache=True)
def _rebuild_rows(R, m, rows, offset, C64, XH, xhat):
    """``xhat[rows[offset + s]] = R[s] @ C`` for the first ``m`` gathered
    rows: one matrix product (``XH`` is its output)."""
    np.dot(R[:m], C64, XH[:m])
    for s in range(m):
        i = rows[offset + s]
        for t in range(C64.shape[1]):
            xhat[i, t] = XH[s, t]


@njit(cache=True)
def soft_rows(k):
    """Rows of a gathered group of soft rows (:data:`SOFT_ENTRIES`)."""
    return max(GEMM_MIN_ROWS, min(BLOCK_ROWS, SOFT_ENTRIES // max(k, 1)))


@njit(cache=True, parallel=True)
def block_pass(X, C, w, sigma, mode, with_stats, xhat):
    """Return ``(N, S, summary)`` for the assignment ``mode`` at ``sigma``;
    when ``xhat`` has rows, each row's reconstruction ``sum_k r_ik c_k`` is
    written to it too (``(n, d)``, C's dtype; the gradient of the loss in X
    is ``2 w_i (x_i - x_hat_i)``).

    ``N`` is ``(k,)`` and ``S`` is ``(k, d)``, both float64 (zeros when
    ``with_stats`` is False, which skips their accumulation); ``summary`` is
    the float64 vector indexed by the constants of this module. ``w`` of
    length 0 means unit weights. Called from Python only (the package's
    ``block_stats`` and ``stats_and_reconstruction``): one compiled pass
    for both, where numba wrappers compiled it again, about 12 s each.

    Each block of rows is worked in three steps: the distances (one BLAS
    product), the rows that are exactly one-hot (every row when hard) folded
    in at their winner, and the other rows gathered into a float64 block
    whose responsibilities are computed together (:func:`assign_block`) and
    whose ``S`` contribution is one more BLAS product (float64, for float32
    data too).
    """
    n, d = dims(X)
    k = C.shape[0]
    hard = mode == HARD or sigma == 0.0
    direct = is_direct(X, k)
    mu, Ct, cnorm = centers_for(X, C)
    chunks = n_chunks(n, k * (d + 1))
    N_part = np.zeros((chunks, k))
    S_part = np.zeros((chunks, k, d) if with_stats else (chunks, 0, 0))
    sum_part = np.zeros((chunks, N_SUMMARY))
    gemm = with_stats and not hard  # soft rows' S by a matrix product
    rebuild = xhat.shape[0] > 0
    C64 = np.empty((k if rebuild else 0, d))
    for j in range(C64.shape[0]):
        for t in range(d):
            C64[j, t] = C[j, t]
    scale, limit = reach(mode, sigma if not hard else 1.0)
    cap = soft_rows(k)
    step = rows_per_block(X)
    for c in prange(chunks):
        start, stop = chunk_bounds(n, chunks, c)
        xbuf, D = distance_buffers(X, k)
        xt, dist, best, second, nearest = nearest_buffers(X)
        if hard and not direct:
            Cs, DT = column_buffers(X, Ct)
        else:
            Cs = np.empty((0, d), dtype=C.dtype)
            DT = np.empty((0, 0), dtype=C.dtype)
        E, R, work, emin, arg, F = soft_buffers(0 if hard else k, cap)
        rows = np.empty(step, dtype=np.int64)
        Rg = np.empty((step if gemm else 0, k))
        Xg, Sg = gemm_buffers(X, step if gemm else 0, k)
        XH = np.empty((min(cap, step) if rebuild else 0, d))
        N = N_part[c]
        S = S_part[c]
        acc = sum_part[c]
        for b in range(start, stop, step):
            e = min(stop, b + step)
            # Distances, and each row's nearest center: for hard rows
            # transposed, so that the argmin runs across rows in SIMD lanes;
            # for soft rows row by row, so that they are gathered contiguously.
            if direct:
                nearest_rows(X, b, e, mu, Ct, xt, dist, best, second, nearest)
            elif hard:
                sqdist_cols(X, b, e, mu, Cs, cnorm, xbuf, DT, best, best[:0], nearest)
            else:
                sqdist_rows(X, b, e, mu, Ct, cnorm, xbuf, D)
            m = 0  # soft rows of this block, gathered into groups of cap rows
            for i in range(b, e):
                if direct or hard:
                    dmin = np.float64(best[i - b])
                    win = nearest[i - b]
                    lone = hard or out_of_reach(dmin, np.float64(second[i - b]), scale, limit)
                else:
                    dmin, win = row_argmin(D[i - b])
                    lone = one_hot(D[i - b], dmin, scale, limit)
                if lone:
                    # One-hot rows (every row when hard; at low temperature
                    # most): free energy dmin, accumulate at the winner only.
                    wi = w[i] if w.shape[0] else 1.0
                    acc[OBJECTIVE] += wi * dmin
                    acc[INERTIA] += wi * dmin
                    acc[SUPPORT] += wi
                    acc[SUPPORT_MAX] = max(acc[SUPPORT_MAX], 1.0)
                    if with_stats:
                        N[win] += wi
                        add_row(X, i, S, win, wi)
                    if rebuild:
                        for t in range(d):
                            xhat[i, t] = C[win, t]
                    continue
                g = m % cap
                if direct:  # the row's distances were not formed yet
                    direct_row(X, i, mu, Ct, D[i - b])
                for j in range(k):
                    E[g, j] = D[i - b, j] - dmin
                emin[g] = dmin
                arg[g] = win
                rows[m] = i
                m += 1
                if m % cap == 0:
                    assign_block(mode, E, cap, sigma, emin, arg, R, F, work)
                    fold_soft(R, cap, rows, w, arg, emin, F, acc, N, Rg, m - cap)
                    if rebuild:
                        _rebuild_rows(R, cap, rows, m - cap, C64, XH, xhat)
            if m % cap:
                g = m % cap
                assign_block(mode, E, g, sigma, emin, arg, R, F, work)
                fold_soft(R, g, rows, w, arg, emin, F, acc, N, Rg, m - g)
                if rebuild:
                    _rebuild_rows(R, g, rows, m - g, C64, XH, xhat)
            if with_stats and m:
                scatter_rows(X, rows, m, Rg, S, Xg, Sg)
    N_tot = np.zeros(k)
    S_tot = np.zeros((k, d))
    summary = np.zeros(N_SUMMARY)
    for c in range(chunks):
        N_tot += N_part[c]
        if with_stats:
            S_tot += S_part[c]
        fold_summary(summary, sum_part[c])
    return N_tot, S_tot, summary
