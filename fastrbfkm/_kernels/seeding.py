"""Greedy k-means++ seeding (Arthur and Vassilvitskii 2007, with the greedy
local trials that scikit-learn uses).

Random numbers come from the caller (a seeded numpy Generator), so the kernel
is a pure function of its inputs; sums over rows are reduced in the fixed
chunk order, so the choice does not depend on the number of threads.
"""

import numpy as np
from numba import njit, prange

from .chunks import chunk_bounds, n_chunks
from .layout import dims, rows_per_block, seed_buffers, seed_distances, seed_norms, seed_rows

#: Up to this many distances of the rows to a step's candidates (n times
#: trials, float64: 64 MiB), they are kept from the trials to update each
#: row's closest distance with the winner's; beyond, the winner's distances
#: are computed again (a pass of 1 / trials more work).
KEEP_ENTRIES = 1 << 23


@njit(cache=True)
def _pick(cumulative, value):
    """First index whose cumulative weight exceeds ``value`` (clipped to n-1)."""
    return min(np.searchsorted(cumulative, value, side="right"), cumulative.shape[0] - 1)


@njit(cache=True)
def _cumulative_weights(w, out, unit):
    acc = 0.0
    for i in range(out.shape[0]):
        acc += 1.0 if unit else w[i]
        out[i] = acc


@njit(cache=True)
def _closest_to(X, start, stop, mu, norms, T, tnorm, closest, replace):
    """Rows ``start:stop``'s ``closest`` lowered to their distance to the
    one candidate of ``T`` (set to it with ``replace``), a block at a time."""
    block = rows_per_block(X)
    buf, work, D = seed_buffers(X, 1)
    for lo in range(start, stop, block):
        hi = min(stop, lo + block)
        seed_distances(X, lo, hi, mu, norms, T, tnorm, buf, work, D)
        for i in range(hi - lo):
            closest[lo + i] = D[0, i] if replace else min(closest[lo + i], D[0, i])


@njit(cache=True)
def seeding_norms(X):
    """``(mu, norms)`` that :func:`kmeans_plusplus` takes: the shift of the
    rows and their squared norms around it (:func:`~.layout.seed_norms`),
    computed once for all the calls of one seeding."""
    return seed_norms(X)


@njit(cache=True, parallel=True)
def kmeans_plusplus(X, w, mu, norms, seeds, first, last, uniforms, closest):
    """Seeds ``first .. last - 1`` of greedy k-means++, into ``seeds``.

    ``w`` are float64 weights (length n, or 0 for unit weights); ``mu``,
    ``norms`` from :func:`seeding_norms`; ``uniforms``
    is ``(k, trials)`` of U[0, 1) draws: ``uniforms[0, 0]`` picks the first
    seed with probability proportional to ``w``, row ``c`` the ``trials``
    candidates for seed ``c`` (with probability proportional to ``w`` times
    the squared distance to the closest seed so far), of which the one giving
    the lowest potential wins. ``closest`` (float64, n) holds each row's
    squared distance to its closest seed so far and is updated, so that the
    seeds can be chosen over several calls (each one short enough for Ctrl-C
    to be handled between them) with the result of a single call.

    The candidates of a step are copied out first (:func:`~.layout.seed_rows`,
    dense, float64), so that a CSR row's distance to one is a gather over its
    nonzeros (:func:`~.layout.to_seed`). A block of rows' distances to them
    are one step (:func:`~.layout.seed_distances`: for dense rows, one float64
    BLAS product of the block shifted by the rows' mean, or for a few
    features exact differences summed across the rows in SIMD lanes); each
    trial's potential is summed row by row in the fixed chunk order. Up to
    :data:`KEEP_ENTRIES`, the distances are kept for the winner's update. A
    seed's own distance is zero, so that it is never drawn again (exactly:
    a dense product within rounding of zero is summed from differences
    instead; it is set here as well, whatever the layout).
    """
    n = dims(X)[0]
    trials = uniforms.shape[1]
    chunks = n_chunks(n, trials)
    unit = w.shape[0] == 0
    cumulative = np.empty(n)  # with closest: two float64 vectors of n, and the kept distances
    block = rows_per_block(X)
    if first == 0:
        _cumulative_weights(w, cumulative, unit)
        seeds[0] = _pick(cumulative, uniforms[0, 0] * cumulative[-1])
        T, tnorm = seed_rows(X, seeds[:1], mu)
        for b in prange(chunks):
            start, stop = chunk_bounds(n, chunks, b)
            _closest_to(X, start, stop, mu, norms, T, tnorm, closest, True)
        closest[seeds[0]] = 0.0
    keep = n * trials <= KEEP_ENTRIES
    kept = np.empty((trials, n if keep else 0))
    candidates = np.empty(trials, dtype=np.int64)
    partial = np.zeros((chunks, trials))
    best_kept = -1  # the last step's winner among the kept distances, folded in below
    for c in range(max(first, 1), last):
        # The last winner's distances lower ``closest`` in the same serial
        # sweep that sums the potential: a parallel region of its own cost a
        # thread wake-up a seed, more than the sweep.
        acc = 0.0
        for i in range(n):
            if best_kept >= 0:
                closest[i] = min(closest[i], kept[best_kept, i])
                if i == seeds[c - 1]:
                    closest[i] = 0.0
            acc += closest[i] if unit else w[i] * closest[i]
            cumulative[i] = acc
        best_kept = -1
        potential = cumulative[-1]
        for t in range(trials):
            candidates[t] = _pick(cumulative, uniforms[c, t] * potential)
        T, tnorm = seed_rows(X, candidates, mu)
        for b in prange(chunks):
            start, stop = chunk_bounds(n, chunks, b)
            buf, work, D = seed_buffers(X, trials)
            sums = np.zeros(trials)
            for lo in range(start, stop, block):
                hi = min(stop, lo + block)
                seed_distances(X, lo, hi, mu, norms, T, tnorm, buf, work, D)
                for i in range(hi - lo):
                    # each trial's sum over the rows in order, as a row at a time
                    ci = closest[lo + i]
                    wi = 1.0 if unit else w[lo + i]
                    for t in range(trials):
                        best_d = min(ci, D[t, i])
                        sums[t] += best_d if unit else wi * best_d
                if keep:
                    for t in range(trials):
                        for i in range(hi - lo):
                            kept[t, lo + i] = D[t, i]
            for t in range(trials):
                partial[b, t] = sums[t]
        best = 0
        best_pot = np.inf
        for t in range(trials):
            pot = 0.0
            for b in range(chunks):
                pot += partial[b, t]
            if pot < best_pot:
                best_pot = pot
                best = t
        seeds[c] = candidates[best]
        if keep and c + 1 < last:
            best_kept = best  # folded into the next seed's sweep
            continue
        if keep:
            for i in range(n):
                closest[i] = min(closest[i], kept[best, i])
        else:
            W, wnorm = seed_rows(X, seeds[c : c + 1], mu)
            for b in prange(chunks):
                start, stop = chunk_bounds(n, chunks, b)
                _closest_to(X, start, stop, mu, norms, W, wnorm, closest, False)
        closest[seeds[c]] = 0.0
