"""Initial centers: greedy k-means++, weighted random rows, or given.

In memory (and on a GPU), ``"k-means++"`` is greedy k-means++ over every
row, or, with more rows than :func:`seeding_sample` draws (10 rows a center,
at least 10000), greedy k-means++ on that sample followed by two k-means||
rounds over every row (:func:`kmeans_parallel_rows`: about k more candidates
a round, each row drawn in proportion to its squared distance to the
candidates so far) and greedy weighted k-means++ on all the candidates. :func:`kmeans_plusplus`,
the public function, always uses every row. Over a rows
source whose data is not in one place (Dask chunks, blocks streamed from
disk), it is k-means|| (Bahmani et al. 2012), which needs a few passes
instead of k: a first center drawn in proportion to the weights, then a few
rounds that each draw every row independently with probability
``l w_i D(x_i)^2 / phi`` (``l = 2k`` expected candidates a round, ``phi``
the weighted inertia at the candidates so far), and finally greedy weighted
k-means++ on the candidates, each weighted by the mass of the rows nearest
to it.

One dispatch: :func:`initial_centers` maps ``init`` (a name of
:data:`INITS`, or given centers) to its seeding for every rows source and
for the torch layer's ``init_from``. Each seeding is written over the
primitives every source provides (:class:`Source`), so an init is added in
this file alone.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Protocol

import numpy as np

from . import _kernels as K
from ._threads import one_blas_thread
from ._tunables import (
    OVERSAMPLING,
    ROUNDS,
    SEED_OVERSAMPLING,
    SEED_ROUNDS,
    SEED_ROWS_MIN,
    SEED_ROWS_PER_CENTER,
    SEEDING_CALL_WORK,
)
from ._validation import as_csr, as_float_array, check_generator, check_sample_weight, is_sparse

__all__ = [
    "INITS",
    "initial_centers",
    "kmeans_parallel",
    "kmeans_parallel_rows",
    "kmeans_plusplus",
    "kmeans_plusplus_start",
    "random_start",
    "scalable_initial_centers",
    "seed_indices",
    "seeding_sample",
]


class Source(Protocol):
    """The passes of a rows source (:class:`fastrbfkm._rows.Rows`) that the
    seeding algorithms of :data:`INITS` run on, which every source runs
    (:meth:`draw`, :meth:`inertia`, :meth:`oversample`, :meth:`stats`): all
    that k-means|| needs. Sources call this module, so it does not import
    them; a source whose rows can be taken by index has the primitives of
    :class:`IndexedRows` too.
    """

    n: int
    d: int
    dtype: np.dtype

    def draw(self, m: int, key: int) -> np.ndarray: ...

    def inertia(self, C: np.ndarray) -> tuple[float, np.ndarray]: ...

    def oversample(self, C: np.ndarray, rate: float, key: int) -> tuple[np.ndarray, np.ndarray]: ...

    def stats(self, C: np.ndarray, sigma: float, mode: int, with_stats: bool = True): ...


class IndexedRows(ABC):
    """The seeding primitives of a source whose rows can be taken by index,
    with a host array of n values per row affordable (in memory, on a
    device): a capability beside :class:`fastrbfkm._rows.Rows`, defined here
    where it is used. ``"k-means++"`` runs greedy k-means++ on them
    (:func:`kmeans_plusplus_start`), ``"random"`` draws row indices
    (:func:`random_start`); a source without them seeds with k-means|| and
    draws over its passes."""

    #: Greedy k-means++ on a sample of the rows when there are many
    #: (:func:`seeding_sample`); False: on every row (the torch layer's
    #: ``init_from``, as :func:`fastrbfkm.kmeans_plusplus`).
    sampled_seeding: bool = True

    @abstractmethod
    def host_weights(self) -> np.ndarray:
        """The sample weights on the host, float64 (length 0: unit weights)."""

    @abstractmethod
    def take(self, index: np.ndarray) -> np.ndarray:
        """Rows ``X[index]`` as a new dense host array in X's dtype."""

    @abstractmethod
    def nearest(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every row's nearest center and squared distance to it: host
        arrays of n (ties to the lowest index)."""

    @abstractmethod
    def greedy_seeds(self, uniforms: np.ndarray, sample: np.ndarray | None = None) -> np.ndarray:
        """Row indices chosen by greedy k-means++ (as :func:`greedy_seeds`,
        ``k = len(uniforms)`` seeds): over every row with its weight, or,
        given ``sample`` (row indices), over those rows with unit weights."""


def initial_centers(
    rows: Source, k: int, init, rng: np.random.Generator, *, also: tuple[str, ...] = ()
) -> np.ndarray:
    """Initial centers ``(k, d)`` of a rows source: the one place that maps
    ``init`` to a seeding, for every source and the torch layer.

    Parameters
    ----------
    rows : rows source
        Any :class:`fastrbfkm._rows.Rows` (in memory, CSR, streamed, Dask,
        on a device); the seedings use only its primitives (:class:`Source`,
        :class:`IndexedRows`).
    k : int
        Number of centers.
    init : str or array of shape (k, d)
        A name of :data:`INITS`, or given centers (copied in the source's
        dtype). A callable ``init`` is the estimators' to call: they pass
        its centers here.
    rng : numpy.random.Generator
        The random numbers of the seeding.
    also : tuple of str, default=()
        Other names the caller takes before it calls here (the torch
        layer's ``"fit"``), for the error message only.

    Returns
    -------
    centers : ndarray of shape (k, d)
        In the source's dtype, on the host.

    Raises
    ------
    ValueError
        When ``init`` is a string that is not a name of :data:`INITS`, or
        given centers that are not of shape ``(k, d)``.
    """
    if isinstance(init, str):
        if init not in INITS:
            raise ValueError(_bad_init(init, k, rows.d, also))
        return INITS[init](rows, k, rng)
    C = np.array(init, dtype=rows.dtype, order="C", copy=True)
    if C.shape != (k, rows.d):
        raise ValueError(_bad_init(init, k, rows.d, also))
    return C


def _bad_init(init, k: int, d: int, also: tuple[str, ...]) -> str:
    names = ", ".join(repr(name) for name in (*INITS, *also))
    shown = repr(init) if isinstance(init, str) else f"an array of shape {np.shape(init)}"
    return f"init must be one of {names} or an array of shape ({k}, {d}); got {shown}."


def kmeans_plusplus_start(rows: Source, k: int, rng: np.random.Generator) -> np.ndarray:
    """``init="k-means++"``: ``(k, d)`` rows of the source.

    Over rows that can be taken by index (:class:`IndexedRows`): greedy
    k-means++ on every row when there are at most :func:`seed_rows` rows
    with a positive weight (or when ``rows.sampled_seeding`` is False, as
    for the torch layer), else greedy k-means++ on the rows
    :func:`seeding_sample` draws (unit weights) and k-means|| rounds from
    there over every row (:func:`kmeans_parallel_rows`). Over the other
    sources, k-means|| in a few passes (:func:`kmeans_parallel`).
    """
    if not isinstance(rows, IndexedRows):
        return kmeans_parallel(rows, k, rng)
    w = rows.host_weights()
    sample = seeding_sample(rows.n, k, w, rng) if rows.sampled_seeding else None
    start = rows.take(rows.greedy_seeds(rng.random((k, local_trials(k))), sample))
    if sample is None:
        return start
    return kmeans_parallel_rows(rows.nearest, rows.take, rows.n, k, w, rng, start)


def random_start(rows: Source, k: int, rng: np.random.Generator) -> np.ndarray:
    """``init="random"``: k distinct rows drawn in proportion to the weights
    (:func:`random_indices` over rows that can be taken by index, else one
    pass of :meth:`Source.draw`, whose random numbers depend on the global
    row index only)."""
    if isinstance(rows, IndexedRows):
        return rows.take(random_indices(rows.n, k, rows.host_weights(), rng))
    return rows.draw(k, _key(rng))


#: The names ``init`` takes, each with its seeding over a rows source's
#: primitives, ``seeding(rows, k, rng) -> (k, d) centers``: the estimators'
#: parameter check, every rows source and the torch layer's ``init_from``
#: read this one table. An init is added here.
INITS: dict[str, Callable[[Source, int, np.random.Generator], np.ndarray]] = {
    "k-means++": kmeans_plusplus_start,
    "random": random_start,
}


def seed_rows(k: int) -> int:
    """Rows greedy k-means++ seeds ``k`` centers from, at most:
    ``SEED_ROWS_PER_CENTER * k``, at least ``SEED_ROWS_MIN``."""
    return max(SEED_ROWS_MIN, SEED_ROWS_PER_CENTER * k)


def seeding_sample(n: int, k: int, w: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """The rows ``init="k-means++"`` seeds ``k`` centers from: sorted indices
    of :func:`seed_rows` rows drawn without replacement in proportion to the
    weights ``w`` (empty: unit weights; Efraimidis and Spirakis keys
    ``log(u_i) / w_i`` from one draw of ``n`` uniforms), each standing for an
    equal share of the total weight; or None, drawing nothing from ``rng``,
    when at most that many rows have a positive weight (greedy k-means++
    then runs on every row with its own weight).

    Greedy k-means++ evaluates ``2 + log k`` candidates a seed on every row
    it runs on: on a sample of 10 rows a center it costs about two passes
    over all rows instead of ``2 + log k`` times k.
    """
    m = seed_rows(k)
    if (n if w.size == 0 else int(np.count_nonzero(w))) <= m:
        return None
    with np.errstate(divide="ignore"):
        keys = np.log(rng.random(n))
        if w.size:
            keys = np.where(w > 0, keys / np.where(w > 0, w, 1.0), -np.inf)
    return np.sort(np.argpartition(keys, n - m)[n - m :])


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
    """:func:`initial_centers` (its old name for the sources whose data is
    not in one place, which seed with k-means|| in a few passes).

    The random numbers of a pass depend on the global row index only, so the
    centers do not depend on how the rows are split into blocks or chunks.
    """
    return initial_centers(rows, k, init, rng)


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


def kmeans_parallel_rows(
    assign: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    take: Callable[[np.ndarray], np.ndarray],
    n: int,
    k: int,
    w: np.ndarray,
    rng: np.random.Generator,
    start: np.ndarray,
    rounds: int | None = None,
    oversampling: float | None = None,
) -> np.ndarray:
    """k-means|| rounds from the centers ``start`` over rows whose passes are
    ``assign(C) -> (labels, squared distances)`` (host arrays of n) and
    ``take(index) -> rows`` (dense, host), each round's distances only to
    its new candidates; ``(k, d)`` centers, rows of the data or of ``start``
    (k distinct rows of the data with positive weights, so that the centers
    are distinct).

    Each round draws every row independently with probability
    ``min(1, l w_i D_i / phi)`` (``l = oversampling * k``, ``D_i`` the row's
    squared distance to its nearest candidate so far, ``phi`` their
    weighted sum) and lowers the rows' distances and nearest candidates by
    one pass over the new ones. Greedy weighted k-means++ on the candidates
    (``start`` and those drawn), each weighted by the mass of the rows
    nearest to it, chooses the k centers. ``rounds`` rounds cost
    ``n (len(start) + candidates drawn)`` distances: with the defaults
    (None: ``SEED_ROUNDS`` and ``SEED_OVERSAMPLING``), about three passes
    at k centers. No rounds return ``start``.
    """
    rounds = SEED_ROUNDS if rounds is None else rounds
    oversampling = SEED_OVERSAMPLING if oversampling is None else oversampling
    C = np.asarray(start)
    if rounds == 0:
        return C.copy()
    labels, mind = assign(C)
    labels = labels.astype(np.int64)
    mind = mind.astype(np.float64)
    for _ in range(rounds):
        mass = mind * w if w.size else mind
        phi = float(mass.sum())
        if not phi > 0:
            break  # every row is on a candidate
        pick = np.flatnonzero(rng.random(n) < (oversampling * k / phi) * mass)
        if pick.size == 0:
            continue
        new = take(pick).astype(C.dtype, copy=False)
        near, dist = assign(new)
        closer = dist < mind
        mind[closer] = dist[closer]
        labels[closer] = near[closer] + C.shape[0]
        C = np.concatenate([C, new])
    weights = np.bincount(labels, w if w.size else None, minlength=C.shape[0])
    return C[seed_indices(C, k, weights.astype(np.float64), rng)].copy()


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
    """Greedy k-means++ seeding (as scikit-learn's ``kmeans_plusplus``), over
    every row.

    :class:`fastrbfkm.RBFKMeans`'s ``init="k-means++"`` runs it on a
    random sample of ``max(10000, 10 * n_clusters)`` rows when X has more,
    and then two k-means|| rounds over every row: a few passes over X instead
    of ``(2 + log k) n_clusters``, at the same inertia after Lloyd's
    algorithm.

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
