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


@njit(cache=True)
def transfer_sweeps(X, w, labels, k, max_sweeps):
    """Sweep the rows in order, moving each to the cluster that lowers the
    weighted inertia most, until a sweep moves none or after ``max_sweeps``.

    ``labels`` (int32, a partition into k non-empty or empty clusters) is
    not modified; ``w`` of length 0 means unit weights. A row of zero weight
    never moves, and no move empties a cluster or fills an empty one.
    Returns ``(centers, labels, sweeps, moves)``: the float64 means of the
    final clusters (zeros for a cluster without mass), their labels, the
    sweeps run and the rows moved.
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
    sweeps = 0
    moves = 0
    while sweeps < max_sweeps:
        sweeps += 1
        moved = 0
        _squared_norms(S, snorm)  # afresh each sweep: the updates drift
        for i in range(n):
            wi = w[i] if w.shape[0] else 1.0
            a = labels[i]
            if wi <= 0.0 or N[a] - wi <= 0.0:
                continue
            # A move must pay by more than rounding, or a row could go back
            # and forth between two clusters.
            mean_sqdists(X, i, T, C, N, snorm, dist)
            gain = N[a] / (N[a] - wi) * dist[a] * (1.0 - 1e-12)
            best = -1
            for b in range(k):
                if b != a and N[b] > 0.0:
                    cost = N[b] / (N[b] + wi) * dist[b]
                    if cost < gain:
                        gain = cost
                        best = b
            if best < 0:
                continue
            move_row(X, i, S, T, C, N, snorm, a, best, wi)
            labels[i] = best
            moved += 1
        moves += moved
        if moved == 0:
            break
    # The means of the final clusters, summed afresh (the running sums drift).
    _means(X, w, labels, k, N, S, C)
    return C, labels, sweeps, moves
