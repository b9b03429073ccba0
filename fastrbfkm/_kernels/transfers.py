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
"""

import numpy as np
from numba import njit

from .distances import row_sqdist


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
    n, d = X.shape
    labels = labels.copy()
    N = np.zeros(k)
    S = np.zeros((k, d))
    for i in range(n):
        wi = w[i] if w.shape[0] else 1.0
        N[labels[i]] += wi
        for t in range(d):
            S[labels[i], t] += wi * X[i, t]
    C = np.zeros((k, d))
    for j in range(k):
        if N[j] > 0:
            for t in range(d):
                C[j, t] = S[j, t] / N[j]
    sweeps = 0
    moves = 0
    while sweeps < max_sweeps:
        sweeps += 1
        moved = 0
        for i in range(n):
            wi = w[i] if w.shape[0] else 1.0
            a = labels[i]
            if wi <= 0.0 or N[a] - wi <= 0.0:
                continue
            # A move must pay by more than rounding, or a row could go back
            # and forth between two clusters.
            gain = N[a] / (N[a] - wi) * row_sqdist(X, i, C, a) * (1.0 - 1e-12)
            best = -1
            for b in range(k):
                if b != a and N[b] > 0.0:
                    cost = N[b] / (N[b] + wi) * row_sqdist(X, i, C, b)
                    if cost < gain:
                        gain = cost
                        best = b
            if best < 0:
                continue
            N[a] -= wi
            N[best] += wi
            for t in range(d):
                S[a, t] -= wi * X[i, t]
                S[best, t] += wi * X[i, t]
                C[a, t] = S[a, t] / N[a]
                C[best, t] = S[best, t] / N[best]
            labels[i] = best
            moved += 1
        moves += moved
        if moved == 0:
            break
    # The means of the final clusters, summed afresh (the running sums drift).
    N[:] = 0.0
    S[:] = 0.0
    for i in range(n):
        wi = w[i] if w.shape[0] else 1.0
        N[labels[i]] += wi
        for t in range(d):
            S[labels[i], t] += wi * X[i, t]
    for j in range(k):
        if N[j] > 0:
            for t in range(d):
                C[j, t] = S[j, t] / N[j]
    return C, labels, sweeps, moves
