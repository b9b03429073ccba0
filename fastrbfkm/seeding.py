"""Initial centers: greedy k-means++, weighted random rows, or given."""

from __future__ import annotations

import numpy as np

from . import _kernels as K
from ._validation import as_float_array, check_sample_weight


def initial_centers(X: np.ndarray, k: int, init, w: np.ndarray, rng: np.random.Generator):
    """Initial centers (k, d) for validated X; ``init`` already checked."""
    if isinstance(init, str) and init == "k-means++":
        return X[seed_indices(X, k, w, rng)].copy()
    if isinstance(init, str):  # "random": distinct rows, drawn in proportion to w
        p = None if w.size == 0 else w / w.sum()
        if p is not None and np.count_nonzero(p) < k:
            p = None  # too few weighted rows to draw k distinct ones
        return X[np.sort(rng.choice(X.shape[0], size=k, replace=False, p=p))].copy()
    return np.array(init, dtype=X.dtype, order="C", copy=True)


def seed_indices(X: np.ndarray, k: int, w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row indices chosen by greedy k-means++ with ``2 + floor(log k)`` local trials."""
    trials = 2 + int(np.log(k))
    return K.kmeans_plusplus(X, w, k, rng.random((k, trials)))


def kmeans_plusplus(
    X, n_clusters: int, *, sample_weight=None, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Greedy k-means++ seeding (as scikit-learn's ``kmeans_plusplus``).

    Parameters
    ----------
    X : array-like of shape (n, d)
        Data.
    n_clusters : int
        Number of seeds, at most n.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights with a positive sum.
    random_state : int, Generator or None, default=None
        Seed.

    Returns
    -------
    centers : ndarray of shape (n_clusters, d)
        The seeds, in X's float dtype.
    indices : ndarray of shape (n_clusters,)
        Their rows in X.
    """
    X = as_float_array(X, "X", coordinates=True)
    w = check_sample_weight(sample_weight, X.shape[0])
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)):
        raise TypeError(f"n_clusters must be a positive integer; got {n_clusters!r}.")
    if not 1 <= n_clusters <= X.shape[0]:
        raise ValueError(f"n_clusters must be in [1, n_samples={X.shape[0]}]; got {n_clusters}.")
    idx = seed_indices(X, int(n_clusters), w, np.random.default_rng(random_state))
    return X[idx].copy(), idx
