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
