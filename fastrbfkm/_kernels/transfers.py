"""Hartigan's single-point transfers: move a row to another cluster whenever
that lowers the inertia, the means updated at once.

A Lloyd fixed point can still be improved by moving one row: taking row i
(weight w) out of its cluster a lowers the inertia by
``w N_a / (N_a - w) ||x - c_a||^2`` and putting it into b raises it by
``w N_b / (N_b + w) ||x - c_b||^2`` (the means move with it), so the move pays
when the second is smaller, even though c_a is the nearest center. Sweeping
the rows in order until no move pays ends at a fixed point of Hartigan's
method, which is also a Lloyd fixed point (Telgarsky and Vattani, 2010): on
overlapping clusters it often has a lower inertia than the Lloyd fixed point
it started from. The sweeps are sequential (each move changes two means), so
the result does not depend on threads.

The kernel is the same for dense and CSR rows (:mod:`.layout`). A dense row's
distance to a mean is summed from the differences and a move updates both
means; a CSR row's distances come from its nonzeros, the clusters' sums
(kept transposed, ``(d, k)``), masses and the sums' squared norms, which a
move updates at the cost of the row's nonzeros (updating the means would
cost the data's width per move).
"""

import numpy as np
from numba import njit

from .layout import add_row, dims, mean_sqdists, move_row, sums_transposed, transfer_buffer


@njit(cache=True)
def _means(X, w, labels, k, N, S, C):
    """The weighted masses, sums and means of the clusters ``labels`` (into
    N, S, C; zero for a cluster without mass)."""
    d = C.shape[1]
    N[:] = 0.0
    S[:] = 0.0
    for i in range(labels.shape[0]):
        wi = w[i] if w.shape[0] else 1.0
        N[labels[i]] += wi
        add_row(X, i, S, labels[i], wi)
    C[:] = 0.0
    for j in range(k):
        if N[j] > 0:
            for t in range(d):
                C[j, t] = S[j, t] / N[j]


@njit(cache=True)
def _squared_norms(S, out):
    for j in range(S.shape[0]):
        acc = 0.0
        for t in range(S.shape[1]):
            acc += S[j, t] * S[j, t]
        out[j] = acc


#: A row is skipped only when its bounds clear the move test by this
#: relative margin, far above the rounding of the distances they come from,
#: so that a sweep moves exactly the rows that testing every row would.
BOUND_MARGIN = 1e-6


@njit(cache=True)
def transfer_sweeps(X, w, labels, k, max_sweeps):
    """Sweep the rows in order, moving each to the cluster that lowers the
    weighted inertia most, until a sweep moves none or after ``max_sweeps``.

    ``labels`` (int32, a partition into k non-empty or empty clusters) is
    not modified; ``w`` of length 0 means unit weights. A row of zero weight
    never moves, and no move empties a cluster or fills an empty one.
    Returns ``(centers, labels, sweeps, moves, tested)``: the float64 means
    of the final clusters (zeros for a cluster without mass), their labels,
    the sweeps run, the rows moved and the rows whose distances to every
    mean were formed.

    Most rows are far from moving, and a sweep skips them by bounds, as
    Hamerly's bounds skip rows in Lloyd's algorithm: a row tested and left
    keeps an upper bound on its distance to its own mean and a lower bound
    on its distance to every other non-empty one. A move shifts the two
    means by known amounts (taking row i of weight w out of cluster a moves
    its mean by ``w ||x_i - c_a|| / (N_a - w)``, adding it to b by ``w
    ||x_i - c_b|| / (N_b + w)``): the upper bound grows by its own mean's
    moves since it was set, the lower bound shrinks by the larger of the two
    shifts of every move since. A row whose bounds show that no cluster's
    cost, at least ``N_min / (N_min + w)`` times the lower bound squared,
    falls below its gain, at most ``N_a / (N_a - w)`` times the upper bound
    squared, is not tested: testing it would not move it.
    """
    n, d = dims(X)
    labels = labels.copy()
    N = np.zeros(k)
    S = np.zeros((k, d))
    C = np.zeros((k, d))
    T = transfer_buffer(X, k)
    snorm = np.zeros(k)
    dist = np.zeros(k)
    _means(X, w, labels, k, N, S, C)
    sums_transposed(X, S, T)
    # The bounds (a lower bound below zero: none yet), and how far the means
    # had moved when they were set: ``drift[j]`` the total shift of mean j,
    # ``shifted`` the sum over moves of the larger of a move's two shifts.
    upper = np.zeros(n)
    lower = np.full(n, -1.0)
    own_drift = np.zeros(n)
    all_drift = np.zeros(n)
    drift = np.zeros(k)
    shifted = 0.0
    sweeps = 0
    moves = 0
    tested = 0
    while sweeps < max_sweeps:
        sweeps += 1
        moved = 0
        _squared_norms(S, snorm)  # afresh each sweep: the updates drift
        lightest = np.inf  # the smallest mass of a non-empty cluster
        for j in range(k):
            if N[j] > 0.0:
                lightest = min(lightest, N[j])
        for i in range(n):
            wi = w[i] if w.shape[0] else 1.0
            a = labels[i]
            if wi <= 0.0 or N[a] - wi <= 0.0:
                continue
            if lower[i] >= 0.0:
                far = lower[i] - (shifted - all_drift[i])
                near = upper[i] + (drift[a] - own_drift[i])
                if far > 0.0:
                    cost = lightest / (lightest + wi) * far * far
                    gain = N[a] / (N[a] - wi) * near * near
                    if cost > gain * (1.0 + BOUND_MARGIN):
                        continue
            tested += 1
            # A move must pay by more than rounding, or a row could go back
            # and forth between two clusters.
            mean_sqdists(X, i, T, C, N, snorm, dist)
            gain = N[a] / (N[a] - wi) * dist[a] * (1.0 - 1e-12)
            best = -1
            other = np.inf
            for b in range(k):
                if b != a and N[b] > 0.0:
                    other = min(other, dist[b])
                    cost = N[b] / (N[b] + wi) * dist[b]
                    if cost < gain:
                        gain = cost
                        best = b
            if best < 0:
                upper[i] = np.sqrt(dist[a])
                lower[i] = np.sqrt(other) if other < np.inf else -1.0
                own_drift[i] = drift[a]
                all_drift[i] = shifted
                continue
            out = wi * np.sqrt(dist[a]) / (N[a] - wi) * (1.0 + BOUND_MARGIN)
            into = wi * np.sqrt(dist[best]) / (N[best] + wi) * (1.0 + BOUND_MARGIN)
            move_row(X, i, S, T, C, N, snorm, a, best, wi)
            drift[a] += out
            drift[best] += into
            shifted += max(out, into)
            lightest = min(lightest, N[a])
            lower[i] = -1.0  # tested afresh in the next sweep
            labels[i] = best
            moved += 1
        moves += moved
        if moved == 0:
            break
    # The means of the final clusters, summed afresh (the running sums drift).
    _means(X, w, labels, k, N, S, C)
    return C, labels, sweeps, moves, tested
