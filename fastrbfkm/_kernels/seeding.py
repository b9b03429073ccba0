"""Greedy k-means++ seeding (Arthur and Vassilvitskii 2007, with the greedy
local trials that scikit-learn uses).

Random numbers come from the caller (a seeded numpy Generator), so the kernel
is a pure function of its inputs; sums over rows are reduced in the fixed
chunk order, so the choice does not depend on the number of threads.
"""

import numpy as np
from numba import njit, prange

from .chunks import chunk_bounds, n_chunks
from .layout import dims, row_norms, seed_rows, to_seed


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


@njit(cache=True, parallel=True)
def kmeans_plusplus(X, w, seeds, first, last, uniforms, closest):
    """Seeds ``first .. last - 1`` of greedy k-means++, into ``seeds``.

    ``w`` are float64 weights (length n, or 0 for unit weights); ``uniforms``
    is ``(k, trials)`` of U[0, 1) draws: ``uniforms[0, 0]`` picks the first
    seed with probability proportional to ``w``, row ``c`` the ``trials``
    candidates for seed ``c`` (with probability proportional to ``w`` times
    the squared distance to the closest seed so far), of which the one giving
    the lowest potential wins. ``closest`` (float64, n) holds each row's
    squared distance to its closest seed so far and is updated, so that the
    seeds can be chosen over several calls (each one short enough for Ctrl-C
    to be handled between them) with the result of a single call.

    The candidates of a step are copied out first (:func:`~.layout.seed_rows`,
    dense), so that a CSR row's distance to one is a gather over its
    nonzeros (:func:`~.layout.to_seed`).
    """
    n = dims(X)[0]
    trials = uniforms.shape[1]
    chunks = n_chunks(n, trials)
    unit = w.shape[0] == 0
    cumulative = np.empty(n)  # with closest: two float64 vectors of n in all
    norms = row_norms(X)
    if first == 0:
        _cumulative_weights(w, cumulative, unit)
        seeds[0] = _pick(cumulative, uniforms[0, 0] * cumulative[-1])
        T, tnorm = seed_rows(X, seeds[:1])
        for i in prange(n):
            closest[i] = to_seed(X, i, norms, T, tnorm, 0)
    candidates = np.empty(trials, dtype=np.int64)
    partial = np.zeros((chunks, trials))
    for c in range(max(first, 1), last):
        acc = 0.0
        for i in range(n):
            acc += closest[i] if unit else w[i] * closest[i]
            cumulative[i] = acc
        potential = cumulative[-1]
        for t in range(trials):
            candidates[t] = _pick(cumulative, uniforms[c, t] * potential)
        T, tnorm = seed_rows(X, candidates)
        for b in prange(chunks):
            start, stop = chunk_bounds(n, chunks, b)
            for t in range(trials):
                acc = 0.0
                for i in range(start, stop):
                    best_d = min(closest[i], to_seed(X, i, norms, T, tnorm, t))
                    acc += best_d if unit else w[i] * best_d
                partial[b, t] = acc
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
        for i in prange(n):
            closest[i] = min(closest[i], to_seed(X, i, norms, T, tnorm, best))
