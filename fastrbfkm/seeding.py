"""Initial centers: greedy k-means++, weighted random rows, or given.

In memory, ``"k-means++"`` is greedy k-means++ over all rows. Over a rows
source whose data is not in one place (Dask chunks, blocks streamed from
disk), it is k-means|| (Bahmani et al. 2012), which needs a few passes
instead of k: a first center drawn in proportion to the weights, then a few
rounds that each draw every row independently with probability
``l w_i D(x_i)^2 / phi`` (``l = 2k`` expected candidates a round, ``phi``
the weighted inertia at the candidates so far), and finally greedy weighted
k-means++ on the candidates, each weighted by the mass of the rows nearest
to it.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from . import _kernels as K
from ._threads import one_blas_thread
from ._tunables import OVERSAMPLING, ROUNDS, SEEDING_CALL_WORK
from ._validation import as_csr, as_float_array, check_generator, check_sample_weight, is_sparse

__all__ = ["kmeans_parallel", "kmeans_plusplus", "scalable_initial_centers", "seed_indices"]


class Source(Protocol):
    """The passes of a rows source (:class:`fastrbfkm._rows.Rows`) that
    k-means|| uses. Sources call this module, so it does not import them."""

    dtype: np.dtype

    def draw(self, m: int, key: int) -> np.ndarray: ...

    def inertia(self, C: np.ndarray) -> tuple[float, np.ndarray]: ...

    def oversample(self, C: np.ndarray, rate: float, key: int) -> tuple[np.ndarray, np.ndarray]: ...

    def stats(self, C: np.ndarray, sigma: float, mode: int, with_stats: bool = True): ...


def initial_centers(X: np.ndarray, k: int, init, w: np.ndarray, rng: np.random.Generator):
    """Initial centers (k, d) for validated X; ``init`` already checked."""
    if isinstance(init, str) and init == "k-means++":
        return K.take_rows(X, seed_indices(X, k, w, rng))
    if isinstance(init, str):
        return K.take_rows(X, random_indices(X.shape[0], k, w, rng))
    return np.array(init, dtype=X.dtype, order="C", copy=True)


def random_indices(n: int, k: int, w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``init="random"``: k distinct row indices (sorted), drawn in
    proportion to the weights ``w`` (empty: unit weights)."""
    p = None if w.size == 0 else w / w.sum()
    if p is not None and np.count_nonzero(p) < k:
        p = None  # too few weighted rows to draw k distinct ones
    return np.sort(rng.choice(n, size=k, replace=False, p=p))


def local_trials(k: int) -> int:
    """Greedy k-means++'s candidates per seed: ``2 + floor(log k)``."""
    return 2 + int(np.log(k))


def scalable_initial_centers(rows: Source, k: int, init, rng: np.random.Generator) -> np.ndarray:
    """Initial centers (k, d) over any rows source, in a few passes:
    k-means|| for ``"k-means++"``, a weighted draw of k distinct rows for
    ``"random"``, a copy of given centers (``init`` already checked).

    The random numbers of a pass depend on the global row index only, so the
    centers do not depend on how the rows are split into blocks or chunks.
    """
    if not isinstance(init, str):
        return np.array(init, dtype=rows.dtype, order="C", copy=True)
    if init == "random":
        return rows.draw(k, _key(rng))
    return kmeans_parallel(rows, k, rng)


def _key(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**63))


def kmeans_parallel(rows: Source, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means|| seeding over a rows source: ``(k, d)`` centers, rows of X.

    With fewer than k candidates (data with few distinct points), distinct
    rows drawn in proportion to the weights fill up; only when X has fewer
    than k distinct rows are centers repeated.
    """
    C = rows.draw(1, _key(rng))
    for _ in range(ROUNDS):
        phi, _ = rows.inertia(C)
        if not phi > 0:
            break  # every row is on a candidate
        new, _ = rows.oversample(C, OVERSAMPLING * k / phi, _key(rng))
        C = np.concatenate([C, new])
    if C.shape[0] <= k:
        more = np.concatenate([C, rows.draw(k, _key(rng))])
        _, first = np.unique(more, axis=0, return_index=True)
        distinct = more[np.sort(first)]
        return np.resize(distinct, (k, C.shape[1])) if distinct.shape[0] < k else distinct[:k]
    weights = rows.stats(C, 0.0, K.HARD)[0]
    return C[seed_indices(C, k, weights, rng)].copy()


def seed_indices(X: np.ndarray, k: int, w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row indices chosen by greedy k-means++ with ``2 + floor(log k)`` local trials."""
    return greedy_seeds(X, w, rng.random((k, local_trials(k))))


def greedy_seeds(X: np.ndarray, w: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """:func:`fastrbfkm._kernels.kmeans_plusplus` for all ``k = len(uniforms)``
    seeds, in calls of at most about :data:`SEEDING_CALL_WORK` terms each
    (the same seeds as one call)."""
    n, d = X.shape
    k, trials = uniforms.shape
    seeds = np.empty(k, dtype=np.int64)
    closest = np.empty(n)
    mu, norms = K.seeding_norms(X)
    step = max(1, SEEDING_CALL_WORK // (n * trials * d))
    for first in range(0, k, step):
        K.kmeans_plusplus(X, w, mu, norms, seeds, first, min(k, first + step), uniforms, closest)
    return seeds


@one_blas_thread
def kmeans_plusplus(
    X, n_clusters: int, *, sample_weight=None, random_state=None
) -> tuple[np.ndarray, np.ndarray]:
    """Greedy k-means++ seeding (as scikit-learn's ``kmeans_plusplus``).

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n, d)
        Data (sparse: CSR, other formats converted; never densified).
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
    if is_sparse(X):
        X = as_csr(X, "X", fitting=True)
    else:
        X = as_float_array(X, "X", coordinates=True, fitting=True)
    w = check_sample_weight(sample_weight, X.shape[0])
    if isinstance(n_clusters, bool) or not isinstance(n_clusters, (int, np.integer)):
        raise TypeError(f"n_clusters must be a positive integer; got {n_clusters!r}.")
    if not 1 <= n_clusters <= X.shape[0]:
        raise ValueError(f"n_clusters must be in [1, n_samples={X.shape[0]}]; got {n_clusters}.")
    idx = seed_indices(X, int(n_clusters), w, check_generator(random_state))
    return K.take_rows(X, idx), idx
