"""Hard Lloyd iterations with deterministic relocation of empty clusters.

The loop follows scikit-learn's ``KMeans(algorithm="lloyd")`` step for step
(assign, update, compare labels, compare the center shift with the tolerance,
and a final assignment when the labels did not converge strictly), so that
from the same initial centers both give the same centers and labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _kernels as K


@dataclass
class LloydResult:
    """Outcome of :func:`run_lloyd`."""

    centers: np.ndarray
    labels: np.ndarray
    inertia: float
    n_iter: int


def update_centers(X, C, w, labels, mind):
    """New centers: the weighted means of the cells, with every empty (zero
    mass) cell relocated to one of the points farthest from their centers.

    A cell that still has no mass (no point is away from its center: fewer
    distinct points than clusters) goes to the heaviest cell's center, as in
    scikit-learn, so no center is ever NaN.
    """
    N, S = K.label_stats(X, labels, w, C.shape[0])
    empty = np.flatnonzero(N == 0)
    if empty.size and mind.max() > 0:
        far = np.argsort(-mind.astype(np.float64), kind="stable")[: empty.size]
        for j, i in zip(empty, far, strict=True):
            wi = w[i] if w.size else 1.0
            old = labels[i]
            S[old] -= wi * X[i]
            N[old] -= wi
            S[j] = wi * X[i]
            N[j] = wi
    new = np.empty_like(S)
    alive = N > 0
    new[alive] = S[alive] / N[alive, None]
    new[~alive] = new[np.argmax(N)]
    return new.astype(X.dtype, copy=False)


def run_lloyd(X, C, w, max_iter: int, tol: float) -> LloydResult:
    """Lloyd's algorithm on validated arrays.

    ``tol`` is absolute: iteration stops when the labels no longer change or
    the sum of squared center shifts is ``<= tol`` (scikit-learn's rule), or
    after ``max_iter`` iterations.
    """
    labels_old = np.full(X.shape[0], -1, dtype=np.int64)
    strict = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 (n_iter is the result)
        labels, mind, _ = K.hard_assign(X, C, w)
        new = update_centers(X, C, w, labels, mind)
        shift = float(((new.astype(np.float64) - C) ** 2).sum())
        C = new
        if np.array_equal(labels, labels_old):
            strict = True
            break
        if shift <= tol:
            break
        labels_old = labels
    final, _, inertia = K.hard_assign(X, C, w)
    if not strict:  # the labels must match the final centers
        labels = final
    return LloydResult(C, labels, float(inertia), n_iter)


def improve_by_swaps(
    X, w, start: LloydResult, max_iter: int, tol: float, candidates: int = 1
) -> LloydResult:
    """Move centers from where they help least to where a split helps most.

    At a Lloyd fixed point, a move takes a center r away (its points going
    to their second-nearest center, which raises the inertia by ``cost_r``)
    and puts it into the cell s with the largest expected split gain
    ``(2 / pi) N_s lambda_s`` (mass times principal variance: the 2-means
    split of a Gaussian), the two placed at ``c_s +- sqrt(2 lambda_s / pi)
    u_s`` along the principal axis; Lloyd's algorithm then runs again. The
    ``candidates`` moves with the best expected net gain are tried in turn
    and the first that lowers the inertia is kept; the search ends when none
    does (after at most k kept moves). ``n_iter`` of the result counts every
    Lloyd iteration, the rejected trials' included.
    """
    best = start
    k = start.centers.shape[0]
    n_iter = start.n_iter
    for _ in range(k if k > 1 else 0):
        C = best.centers
        costs = K.removal_costs(X, C, w)
        N, M = K.center_scatter(X, C, w, 0.0, K.HARD, np.arange(k))
        spread = np.zeros(k)
        axes = np.zeros(C.shape)
        for j in range(k):
            if N[j] > 0:
                values, vectors = np.linalg.eigh(M[j] / N[j])
                spread[j], axes[j] = max(values[-1], 0.0), vectors[:, -1]
        net = 2.0 / np.pi * (N * spread)[None, :] - costs[:, None]  # net[r, s]
        np.fill_diagonal(net, -np.inf)
        order = np.argsort(-net, axis=None, kind="stable")[:candidates]
        improved = False
        for r, s in zip(*np.unravel_index(order, net.shape), strict=True):
            if net[r, s] <= 0:
                break  # no move is expected to pay
            offset = np.sqrt(2.0 * spread[s] / np.pi) * axes[s]
            trial_C = C.astype(np.float64)
            trial_C[r] = C[s] + offset
            trial_C[s] = C[s] - offset
            trial = run_lloyd(X, trial_C.astype(X.dtype), w, max_iter, tol)
            n_iter += trial.n_iter
            if trial.inertia < best.inertia * (1.0 - 1e-12):
                best, improved = trial, True
                break
        if not improved:
            break
    return LloydResult(best.centers, best.labels, best.inertia, n_iter)
