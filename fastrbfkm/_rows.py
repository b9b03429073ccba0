"""The passes a fit makes over its data, behind one small interface.

Everything the fit loop (annealing, Lloyd, swap moves, the estimator) needs
from X is one of a handful of *passes*: weighted moments, the soft or hard
sufficient statistics ``(N, S, summary)``, the responsibility-weighted
scatter and its products with vectors (:mod:`fastrbfkm._principal`), the
removal costs, the rows farthest from their centers, the hard
inertia and counts, the labels, and for the scalable seeding (k-means||, in
:mod:`fastrbfkm.seeding`) the oversampling draw and a weighted draw of rows
without replacement, whose random numbers depend on the global row index
only (:func:`row_uniforms`).
Each pass is a map over row blocks followed by a reduction of small results
(k-, k x d- or, for narrow data, d x d-sized): ``PASSES[name]`` holds the block function
``block(X, w, offset, *args) -> partial``, the associative ``combine(a, b)``
of two partials (``a`` the earlier rows) and ``finish(partial) -> result``.

A rows source (:class:`Rows`) runs every pass as a typed method: a small
core that every source implements. What only some sources can do is a
capability, a mixin beside :class:`Rows` that a caller asks for with
``isinstance`` (or a function that does: :func:`hard_passes`,
:func:`soft_passes`), never a default that returns None:
:class:`~fastrbfkm.seeding.IndexedRows` (rows taken by index, for the
seedings), :class:`PrunedRows` (passes pruned by distance bounds),
:class:`CellInertiaRows` (the cells' inertia) and :class:`HostRows` (X
itself in host memory: the transfers, its largest magnitude, the data as
given). The sources whose data comes in blocks (:class:`BlockRows`) run
each pass as the fold of its ``PASSES`` entry and decide where the blocks
live and in which order partials are combined: :class:`ArrayRows` holds a
numpy array (:class:`InMemoryRows`) or a CSR matrix (:class:`SparseRows`)
and runs each pass as one call of the numba kernels (which block and reduce
in a fixed order themselves); the sources for blocks streamed from disk
(:mod:`fastrbfkm._streaming`) and Dask chunks (:mod:`fastrbfkm.dask`) fold
the same block functions. The GPU's source (:mod:`fastrbfkm.cuda.rows`)
implements each method with its own kernels. The loop above never changes;
:func:`fastrbfkm._backend.open_rows` chooses the source. The table of which
source has which capability is in ``docs/conventions.md``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import _kernels as K
from ._model import METRICS, Metric
from ._tunables import (
    DENSE_MAX,
    MOMENT_ENTRIES,
    MOMENT_ROWS,
    MOVER_RATIO,
    MOVERS_SHARE,
    PRUNE_HARD_GIVE_UP,
    PRUNE_HARD_WAIT_MAX,
    PRUNE_MIN_CLUSTERS,
    PRUNE_SOFT_SHARE,
)
from ._validation import check_centers
from .seeding import IndexedRows, greedy_seeds, initial_centers

# ---------------------------------------------------------------- the passes


class Moments(NamedTuple):
    """Weighted (or unweighted) moments of the rows, float64."""

    mean: np.ndarray  # (d,)
    variance: np.ndarray  # (d,) per feature
    covariance: np.ndarray | None  # (d, d); None above DENSE_MAX features


def _moments_block(X, w, offset, weighted):
    """``(W, mean, W * cov)`` of a block, float64, by sub-blocks (no float64
    copy of X); only the diagonal of ``W * cov`` above ``DENSE_MAX`` features."""
    n, d = X.shape
    unit = not (weighted and w.size)
    weights = np.ones(n) if unit else w
    total = float(weights.sum())
    mean = np.zeros(d)
    step = max(1, min(MOMENT_ROWS, MOMENT_ENTRIES // max(d, 1)))
    for s in range(0, n, step):
        mean += weights[s : s + step] @ X[s : s + step].astype(np.float64)
    mean /= total if total > 0 else 1.0
    scatter = np.zeros((d, d) if d <= DENSE_MAX else d)
    for s in range(0, n, step):
        Xc = X[s : s + step].astype(np.float64)
        Xc -= mean
        Xw = Xc if unit else weights[s : s + step, None] * Xc
        scatter += Xc.T @ Xw if d <= DENSE_MAX else np.einsum("ij,ij->j", Xc, Xw)
    return total, mean, scatter


def _moments_combine(a, b):
    """Chan et al.'s pairwise update of (weight, mean, scatter or its diagonal)."""
    wa, ma, Ma = a
    wb, mb, Mb = b
    total = wa + wb
    if total == 0:
        return a
    delta = mb - ma
    mean = ma + delta * (wb / total)
    cross = np.outer(delta, delta) if Ma.ndim == 2 else delta * delta
    return total, mean, Ma + Mb + cross * (wa * wb / total)


def _moments_finish(partial) -> Moments:
    total, mean, scatter = partial
    if scatter.ndim == 1:
        return Moments(mean, scatter / total, None)
    covariance = scatter / total
    return Moments(mean, np.diag(covariance).copy(), covariance)


def _stats_block(X, w, offset, C, sigma, mode, with_stats=True):
    return K.block_stats(X, C, w, sigma, mode, with_stats)


def _stats_combine(a, b):
    summary = a[2].copy()
    K.fold_summary(summary, b[2])
    return a[0] + b[0], a[1] + b[1], summary


def _scatter_block(X, w, offset, C, sigma, mode):
    return K.center_scatter(X, C, w, sigma, mode, np.arange(C.shape[0]))


def _scatter_and_cells_block(X, w, offset, C, sigma, mode):
    return K.scatter_and_cells(X, C, w, sigma, mode)


def _scatter_apply_block(X, w, offset, C, sigma, mode, chosen, hard, V, labels):
    if labels.size:
        labels = labels[offset : offset + X.shape[0]]
    return K.scatter_apply(X, C, w, sigma, mode, chosen, hard, V, labels)


def _sum_combine(a, b):
    if isinstance(a, tuple):
        return tuple(x + y for x, y in zip(a, b, strict=True))
    return a + b


def _cells_block(X, w, offset, C, scatter):
    return K.cell_summary(X, C, w, scatter)


def _farthest_block(X, w, offset, C, m):
    """The block's ``m`` rows farthest from their nearest center, as
    ``(dist, index, rows, weights, labels, m)``; ties to the lowest index."""
    labels, mind, _ = K.hard_assign(X, C, w, True)
    return _farthest_of(X, w, offset, mind.astype(np.float64), labels, m)


def _farthest_in_cells_block(X, w, offset, C, m, labels):
    """:func:`_farthest_block` with every row's center given
    (``labels``, of all rows): each row's distance to its own center
    alone, one a row instead of k."""
    own = labels[offset : offset + X.shape[0]]
    return _farthest_of(X, w, offset, K.own_sqdists(X, C, own), own, m)


def _farthest_of(X, w, offset, dist, labels, m):
    """The partial of the farthest passes: the block's ``m`` rows with the
    largest ``dist`` (float64), ties to the lowest index."""
    order = np.argsort(-dist, kind="stable")[:m]
    weights = w[order] if w.size else np.ones(order.size)
    return (
        dist[order],
        order.astype(np.int64) + offset,
        K.take_rows(X, order),
        weights,
        labels[order],
        m,
    )


def _top_combine(a, b):
    """The ``m`` (the last item) entries of two partials with the largest
    score (the first item), ties to the lowest row index (the second)."""
    m = a[-1]
    score = np.concatenate([a[0], b[0]])
    index = np.concatenate([a[1], b[1]])
    order = np.lexsort((index, -score))[:m]
    return (
        *(np.concatenate([x, y])[order] for x, y in zip(a[:-1], b[:-1], strict=True)),
        m,
    )


def _drop_last(partial):
    return partial[:-1]


def _inertia_block(X, w, offset, C):
    """``(inertia, counts)``: weighted hard inertia and rows per nearest center."""
    labels, _, inertia = K.hard_assign(X, C, w, False)
    return inertia, np.bincount(labels, minlength=C.shape[0])


def row_uniforms(key: int, offset: int, n: int) -> np.ndarray:
    """Uniform draws in [0, 1) for the rows ``offset .. offset + n - 1``.

    Row i takes the first of the four numbers of counter i of a Philox
    generator keyed by ``key``, so a row's draw depends on its global index
    only, never on how the rows are split into blocks.
    """
    return np.random.Generator(np.random.Philox(key=key).advance(offset)).random((n, 4))[:, 0]


def oversample_index(mind: np.ndarray, w: np.ndarray, offset: int, rate: float, key: int):
    """k-means|| oversampling of the rows ``offset ..`` with squared distances
    ``mind`` to their nearest center: row i is drawn with probability
    ``min(1, rate * w_i * mind_i)``; returns the local indices drawn."""
    weights = w if w.size else np.ones(mind.shape[0])
    p = rate * weights * mind.astype(np.float64)
    return np.flatnonzero(row_uniforms(key, offset, mind.shape[0]) < p)


def _oversample_block(X, w, offset, C, rate, key):
    """k-means|| oversampling (:func:`oversample_index`); returns ``(index, rows, weights)``."""
    _, mind, _ = K.hard_assign(X, C, w, True)
    pick = oversample_index(mind, w, offset, rate, key)
    weights = w[pick] if w.size else np.ones(pick.size)
    return pick.astype(np.int64) + offset, K.take_rows(X, pick), weights


def _concat_combine(a, b):
    return tuple(np.concatenate([x, y]) for x, y in zip(a, b, strict=True))


def draw_keys(w: np.ndarray, offset: int, n: int, key: int) -> np.ndarray:
    """Efraimidis and Spirakis (2006) keys ``log(u_i) / w_i`` of the rows
    ``offset .. offset + n - 1`` (zero weight: ``-inf``, never before a
    positive one): the ``m`` largest are a weighted sample without replacement."""
    u = row_uniforms(key, offset, n)
    with np.errstate(divide="ignore"):
        keys = np.log(u)
        if w.size:
            keys = np.where(w > 0, keys / np.where(w > 0, w, 1.0), -np.inf)
    return keys


def top_keys(keys: np.ndarray, m: int) -> np.ndarray:
    """Indices of the ``m`` largest keys, largest first, ties to the lowest
    index: ``np.argsort(-keys, kind="stable")[:m]``, in linear time plus a
    sort of the ``m`` chosen (a sample of a few thousand rows from millions
    spent most of its time sorting them all)."""
    n = keys.shape[0]
    if m >= n:
        return np.argsort(-keys, kind="stable")
    if m <= 0:
        return np.empty(0, dtype=np.intp)
    cut = -np.partition(-keys, m - 1)[m - 1]  # the m-th largest key
    above = np.flatnonzero(keys > cut)
    tied = np.flatnonzero(keys == cut)[: m - above.size]  # lowest indices first
    chosen = np.concatenate([above, tied])
    return chosen[np.lexsort((chosen, -keys[chosen]))]


def _draw_block(X, w, offset, m, key):
    """The ``m`` rows with the largest :func:`draw_keys`, as ``(keys, index,
    rows, weights, m)`` (the rows' own sample weights)."""
    keys = draw_keys(w, offset, X.shape[0], key)
    order = top_keys(keys, m)
    weights = w[order] if w.size else np.ones(order.size)
    return keys[order], order.astype(np.int64) + offset, K.take_rows(X, order), weights, m


def draw_into(rows, m: int, key: int, blocks: Iterable[tuple[int, np.ndarray]]):
    """:meth:`Rows.draw_weighted` of a source whose blocks this process
    reads (``(offset, block)`` in row order): the rows chosen by their keys
    alone (made in the ``draw`` pass's blocks, 8 bytes a row), then copied
    block by block into one array. The same rows as the pass, which carries
    every block's drawn rows through its merges (several copies of the
    sample at its peak: a sample of 524288 of 1000000 x 128 float32 rows
    added 877 MiB to the process for its 256 MiB, in 6.4 s)."""
    step = PASSES["draw"].rows_per_block
    w, n = rows.w, rows.n
    keys = np.concatenate(
        [draw_keys(w[s : s + step], s, min(step, n - s), key) for s in range(0, n, step)]
    )
    index = np.sort(top_keys(keys, min(m, n)))
    del keys
    out = np.empty((index.size, rows.d), dtype=rows.dtype)
    for start, X in blocks:
        lo, hi = np.searchsorted(index, (start, start + X.shape[0]))
        # into place (no copy of its own: "clip" is never buffered)
        np.take(np.asarray(X), index[lo:hi] - start, axis=0, out=out[lo:hi], mode="clip")
    return out, w[index] if w.size else np.ones(index.size)


def label_counts(labels: np.ndarray, k: int, block: int = 1 << 20) -> np.ndarray:
    """Rows per label, by blocks (``np.bincount`` copies its input to intp)."""
    counts = np.zeros(k, dtype=np.int64)
    for start in range(0, labels.shape[0], block):
        counts += np.bincount(labels[start : start + block], minlength=k)
    return counts


def _cell_inertia_block(X, w, offset, C):
    """Per center, the weighted inertia of the rows nearest to it (``(k,)``)."""
    labels, mind, _ = K.hard_assign(X, C, w, True)
    dist = mind.astype(np.float64)
    return np.bincount(labels, dist * w if w.size else dist, minlength=C.shape[0])


def _identity(partial):
    return partial


@dataclass(frozen=True)
class Pass:
    """One pass over the rows: a block function, a combiner, a finisher.

    ``rows_per_block`` bounds the block size for passes whose block function
    holds per-row arrays (in-memory sources split longer arrays).
    """

    block: Callable
    combine: Callable
    finish: Callable = _identity
    rows_per_block: int | None = None


PASSES: dict[str, Pass] = {
    "moments": Pass(_moments_block, _moments_combine, _moments_finish),
    "stats": Pass(_stats_block, _stats_combine),
    "scatter": Pass(_scatter_block, _sum_combine),
    "scatter_and_cells": Pass(_scatter_and_cells_block, _sum_combine),
    "scatter_apply": Pass(_scatter_apply_block, _sum_combine),
    "cell_summary": Pass(_cells_block, _sum_combine),
    "farthest": Pass(_farthest_block, _top_combine, _drop_last, rows_per_block=1 << 16),
    "farthest_in_cells": Pass(
        _farthest_in_cells_block, _top_combine, _drop_last, rows_per_block=1 << 16
    ),
    "inertia": Pass(_inertia_block, _sum_combine, rows_per_block=1 << 16),
    "cell_inertia": Pass(_cell_inertia_block, _sum_combine, rows_per_block=1 << 16),
    "oversample": Pass(_oversample_block, _concat_combine, rows_per_block=1 << 16),
    "draw": Pass(_draw_block, _top_combine, _drop_last, rows_per_block=1 << 16),
}


# --------------------------------------------------------------- the sources


@dataclass(frozen=True)
class Farthest:
    """Rows farthest from their nearest center, farthest first."""

    dist: np.ndarray
    index: np.ndarray
    rows: np.ndarray
    weights: np.ndarray
    labels: np.ndarray


@dataclass(frozen=True)
class CellSummary:
    """What the swap search reads of the nearest-center partition by C
    (:meth:`Rows.cell_summary`), float64: per center the removal cost (the
    rise in inertia if it were removed), its cell's inertia (None over rows
    without that pass, :class:`CellInertiaRows`) and its cell's weight, and
    each cell's ``(d, d)`` scatter around its center (None unless asked for)."""

    costs: np.ndarray
    cells: np.ndarray | None
    mass: np.ndarray
    scatter: np.ndarray | None

    @classmethod
    def of(cls, found: tuple) -> CellSummary:
        """From the ``cell_summary`` pass's ``(sums, A)``."""
        sums, A = found
        return cls(sums[0], sums[1], sums[2], A if A.shape[0] else None)


@dataclass
class Bounds:
    """What pruned hard passes (:meth:`InMemoryRows.pruned_stats`) carry from
    one Lloyd iteration to the next: every row's label and a lower bound on
    its distance to every other center (12 bytes a row), valid for
    ``centers`` (float64; None before the first pass)."""

    labels: np.ndarray
    lower: np.ndarray
    centers: np.ndarray | None = None


#: Terms, beyond d, in the rounding error bound of an expanded squared distance.
ROUNDING_TERMS = 8


def center_moves(C: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """How far every center moved, as an upper bound of the true distance."""
    return np.sqrt(((C - previous) ** 2).sum(axis=1)) * (1.0 + 1e-12)


def movers(shift: np.ndarray) -> np.ndarray:
    """The centers that moved far from where the others did (a swap move's),
    for :func:`fastrbfkm._kernels.pruned_hard_stats`: int64 indices."""
    cap = shift.size // MOVERS_SHARE
    if cap == 0:
        return np.empty(0, dtype=np.int64)
    order = np.argsort(-shift, kind="stable")
    far = shift[order[:cap]] > MOVER_RATIO * shift[order[cap]]
    return np.sort(order[:cap][far]).astype(np.int64)


def half_gaps(C: np.ndarray) -> np.ndarray:
    """Half the distance from each center to its nearest other center, as a
    lower bound of the true distance (``inf`` for k = 1)."""
    k = C.shape[0]
    if k == 1:
        return np.full(1, np.inf)
    C = C.astype(np.float64)
    P = C - C.mean(axis=0)
    norms = (P * P).sum(axis=1)
    return 0.5 * np.sqrt(np.maximum(K.nearest_gaps(P, norms), 0.0))


def fold(name: str, blocks: Iterable[tuple[int, np.ndarray]], w: np.ndarray, *args):
    """Run the pass ``PASSES[name]`` over ``(offset, block)`` pairs in row
    order, combining each block's partial with the earlier rows', and finish
    it. ``w`` holds the weights of all rows (length 0: unit weights)."""
    step = PASSES[name]
    partial = None
    for start, X in blocks:
        weights = w[start : start + X.shape[0]] if w.size else w
        part = step.block(X, weights, start, *args)
        partial = part if partial is None else step.combine(partial, part)
    return step.finish(partial)


class Rows(ABC):
    """Where the data lives; every pass over X is a typed method.

    The core every source implements: subclasses set ``n``, ``d``,
    ``dtype`` and ``weight`` (the total sample weight) and implement every
    abstract pass; the others derive from them and a source may override
    them for speed. What only some sources can do is a capability mixin
    beside this class (see the module's docstring), never a method here.
    Centers handed to the methods are host
    numpy arrays in the source's dtype (:meth:`check_centers`); statistics
    are host numpy arrays (float64), while per-row results for new data
    (labels, distances, responsibilities) stay where the data came from:
    numpy for numpy input, a lazy dask array for dask input, a device array
    for CUDA input.
    """

    n: int
    d: int
    dtype: np.dtype
    weight: float
    #: The metric (an entry of :data:`fastrbfkm._model.METRICS`) whose
    #: projection the rows were read through, and which the center updates
    #: project with (``rows.metric.centers``); set by the input door.
    metric: Metric = METRICS["euclidean"]

    @property
    def sphere(self) -> bool:
        """Rows and centers on the unit sphere (the metric's ``sphere``):
        critical temperatures and axes in its tangent spaces."""
        return self.metric.sphere

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, d)``."""
        return self.n, self.d

    def check_centers(self, C, name: str = "C") -> np.ndarray:
        """Centers ``(k, d)`` validated as host numpy in the source's dtype."""
        return check_centers(C, self, name)

    def like_input(self, array: np.ndarray):
        """A small host result where the data came from (here: itself)."""
        return array

    # The passes of a fit: small results, float64 on the host.

    @abstractmethod
    def moments(self, weighted: bool = True) -> Moments:
        """Mean, per-feature variance and (up to ``DENSE_MAX`` features)
        covariance, weighted or not, float64."""

    @abstractmethod
    def stats(self, C: np.ndarray, sigma: float, mode: int, with_stats: bool = True):
        """``(N, S, summary)`` of :func:`fastrbfkm._kernels.block_stats` (N and
        S zeros when ``with_stats`` is False, which skips their accumulation)."""

    @abstractmethod
    def scatter(self, C: np.ndarray, sigma: float, mode: int):
        """``(N, A)`` of :func:`fastrbfkm._kernels.center_scatter` for every center."""

    def scatter_and_cells(self, C: np.ndarray, sigma: float, mode: int):
        """``(N, S, A, N_cells, A_cells)``: :meth:`scatter` at ``sigma``
        with the soft step's weighted sums ``S`` (None where the pass does
        not form them), and of the hard cells; here two passes, where
        :class:`BlockRows` makes one, sums included
        (:func:`fastrbfkm._kernels.scatter_and_cells`)."""
        N, A = self.scatter(C, sigma, mode)
        return (N, None, A, *self.scatter(C, 0.0, K.HARD))

    @abstractmethod
    def cell_summary(self, C: np.ndarray, scatter: bool) -> CellSummary:
        """The :class:`CellSummary` of C: per center the removal cost (the
        rise in inertia if it were removed), the cell's inertia where the
        source runs that pass (:class:`CellInertiaRows`), and its mass; with the cells' scatter when
        ``scatter`` is True (a source that forms the matrices only: see
        :func:`fastrbfkm._axes.forms_scatter`)."""

    @abstractmethod
    def farthest(self, C: np.ndarray, m: int) -> Farthest:
        """The ``m`` rows farthest from their nearest center (ties: lowest index)."""

    @abstractmethod
    def inertia(self, C: np.ndarray) -> tuple[float, np.ndarray]:
        """Weighted hard inertia and the number of rows per nearest center."""

    @abstractmethod
    def oversample(self, C: np.ndarray, rate: float, key: int) -> tuple[np.ndarray, np.ndarray]:
        """k-means|| draw: ``(rows, weights)`` of the rows drawn independently with
        probability ``min(1, rate * w_i * min_k D_ik)`` (:func:`oversample_index`),
        in row order."""

    def draw(self, m: int, key: int) -> np.ndarray:
        """``m`` distinct rows drawn with probability in proportion to the
        weights, without replacement (:func:`draw_keys`), in row order (all
        rows when n <= m)."""
        return self.draw_weighted(m, key)[0]

    @abstractmethod
    def draw_weighted(self, m: int, key: int) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, weights)``: the rows of :meth:`draw` and their own sample
        weights (ones for unit weights)."""

    @abstractmethod
    def batch(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A mini-batch in host memory, checked: ``(rows, weights)``, ``m``
        rows drawn uniformly with replacement, in row order (as scikit-learn's
        ``MiniBatchKMeans`` draws them), or, for a source in chunks, one chunk
        drawn at random; ``weights`` their sample weights (length 0: unit)."""

    @abstractmethod
    def assign(self, C: np.ndarray):
        """``(labels, inertia, counts)``: nearest centers (ties to the lowest
        index), the weighted inertia and the number of rows per center."""

    def initial_centers(self, k: int, init, rng: np.random.Generator) -> np.ndarray:
        """``(k, d)`` initial centers: a name of :data:`fastrbfkm.seeding.INITS`
        or given centers, by :func:`fastrbfkm.seeding.initial_centers` (the
        one dispatch: a source provides only the primitives below)."""
        return initial_centers(self, k, init, rng)

    # The results for new data: one pass, per row.

    def labels(self, C: np.ndarray):
        """``(n,)`` int32 nearest centers (ties to the lowest index); here
        those of :meth:`assign`."""
        return self.assign(C)[0]

    @abstractmethod
    def squared_distances(self, C: np.ndarray):
        """``(n, k)`` squared Euclidean distances to the centers, in X's dtype."""

    def distances(self, C: np.ndarray):
        """``(n, k)`` Euclidean distances to the centers, in X's dtype."""
        return np.sqrt(self.squared_distances(C))

    @abstractmethod
    def responsibilities(self, C: np.ndarray, sigma: float, mode: int):
        """``(n, k)`` responsibilities at temperature sigma, in X's dtype."""

    def total_inertia(self, C: np.ndarray) -> float:
        """The weighted K-Means inertia ``sum_i w_i min_k D_ik`` (one pass)."""
        return float(self.assign(C)[1])


class PrunedRows(ABC):
    """Pruned passes, a capability beside :class:`Rows` (dense rows in
    memory, :class:`InMemoryRows`): passes that carry distance bounds
    (:class:`Bounds`) from one to the next and skip the centers a row cannot
    be nearest to (hard) or that are beyond the assignment's reach (soft).
    A run asks for its passes with :func:`hard_passes` and
    :func:`soft_passes`, which prune over rows with this capability where
    :meth:`prunes` says it pays."""

    @abstractmethod
    def prunes(self, k: int) -> bool:
        """Whether passes with ``k`` centers pay for carrying bounds."""

    @abstractmethod
    def new_bounds(self, k: int) -> Bounds:
        """Bounds for pruned passes with ``k`` centers over these rows."""

    @abstractmethod
    def pruned_stats(self, C: np.ndarray, bounds: Bounds):
        """The hard :meth:`Rows.stats` at C, each cell's inertia and the
        number of row-center distances formed: ``(N, S, summary, cells,
        evaluated)``; ``bounds`` is updated to C."""

    @abstractmethod
    def farthest_in_cells(self, C: np.ndarray, m: int, labels: np.ndarray) -> Farthest:
        """:meth:`Rows.farthest` with every row's nearest center known
        (``labels``, the bounds' after a pruned pass at C): the ``m`` rows
        farthest from their own center, one distance a row."""

    @abstractmethod
    def pruned_soft_stats(self, C: np.ndarray, sigma: float, mode: int, bounds: Bounds):
        """The soft :meth:`Rows.stats` at C and the number of row-center
        distances formed: ``(N, S, summary, evaluated)``; ``bounds`` is
        updated to C."""


class HostRows(ABC):
    """X itself in host memory, a capability beside :class:`Rows` (dense
    and CSR rows in memory, :class:`ArrayRows`): its values at hand, and its
    rows visited one at a time, in order. The other sources skip what needs
    it (the transfers run on a fit's in-memory annealing sample instead)."""

    #: CSR rows (:class:`SparseRows`).
    sparse: bool = False

    @abstractmethod
    def as_given(self):
        """The data as a user's ``init`` callable takes it (the array, or a
        scipy CSR matrix)."""

    @abstractmethod
    def largest_magnitude(self) -> float:
        """The largest absolute value in X (one pass over the values)."""

    @abstractmethod
    def transfers(self, C: np.ndarray, max_sweeps: int):
        """Hartigan's single-point transfers from the nearest-center
        partition of C (:func:`fastrbfkm._kernels.transfer_sweeps`):
        ``(centers, sweeps)``, the centers float64."""


class CellInertiaRows(ABC):
    """The cells' inertia, a capability beside :class:`Rows` (every source
    of block folds, :class:`BlockRows`; not the device): what the swap
    search's batched moves compare before and after a Lloyd run."""

    @abstractmethod
    def cell_inertia(self, C: np.ndarray) -> np.ndarray:
        """Per center, the weighted inertia of its Voronoi cell (``(k,)``,
        float64), as :meth:`Rows.cell_summary`'s ``cells``."""


class BlockRows(CellInertiaRows, Rows):
    """A source whose fit passes are folds of the block functions of
    :data:`PASSES` (in memory, streamed from a file, over dask chunks):
    subclasses implement :meth:`reduce`, which decides where the blocks
    live and in which order their partials are combined."""

    @abstractmethod
    def reduce(self, name: str, *args):
        """Run the pass ``PASSES[name]`` over every block and reduce it."""

    def moments(self, weighted: bool = True) -> Moments:
        return self.reduce("moments", weighted)

    def stats(self, C: np.ndarray, sigma: float, mode: int, with_stats: bool = True):
        return self.reduce("stats", C, sigma, mode, with_stats)

    def scatter(self, C: np.ndarray, sigma: float, mode: int):
        return self.reduce("scatter", C, sigma, mode)

    def scatter_and_cells(self, C: np.ndarray, sigma: float, mode: int):
        return self.reduce("scatter_and_cells", C, sigma, mode)

    def cell_labels(self, C: np.ndarray) -> np.ndarray:
        """Each row's nearest center, for the passes of
        :func:`fastrbfkm._axes.principal` over hard cells to read instead of
        finding them every pass; here empty (they do: the labels of every row
        would be held at once)."""
        return np.empty(0, dtype=np.int32)

    def cell_summary(self, C: np.ndarray, scatter: bool) -> CellSummary:
        """One pass (:func:`fastrbfkm._kernels.cell_summary`)."""
        return CellSummary.of(self.reduce("cell_summary", C, bool(scatter)))

    def farthest(self, C: np.ndarray, m: int) -> Farthest:
        return Farthest(*self.reduce("farthest", C, m))

    def inertia(self, C: np.ndarray) -> tuple[float, np.ndarray]:
        inertia, counts = self.reduce("inertia", C)
        return float(inertia), counts

    def cell_inertia(self, C: np.ndarray) -> np.ndarray:
        return self.reduce("cell_inertia", C)

    def oversample(self, C: np.ndarray, rate: float, key: int) -> tuple[np.ndarray, np.ndarray]:
        _, rows, weights = self.reduce("oversample", C, rate, key)
        return rows, weights

    def draw_weighted(self, m: int, key: int) -> tuple[np.ndarray, np.ndarray]:
        _, index, rows, weights = self.reduce("draw", m, key)
        order = np.argsort(index, kind="stable")
        return rows[order], weights[order]


class ArrayRows(HostRows, IndexedRows, BlockRows):
    """Rows in host memory, a validated array or CSR matrix (``X``) and its
    weights (``w``, length 0: unit weights): what dense rows
    (:class:`InMemoryRows`) and CSR rows (:class:`SparseRows`) share. Each
    pass is one call of the kernels, which take either kind of ``X``."""

    def __init__(self, X: np.ndarray, w: np.ndarray):
        self.X = X
        self.w = w
        self.n, self.d = X.shape
        self.dtype = X.dtype
        self.weight = float(w.sum()) if w.size else float(self.n)

    @abstractmethod
    def _rows_at(self, index: np.ndarray):
        """Rows ``X[index]`` as data (dense rows dense, CSR rows CSR)."""

    def assign(self, C: np.ndarray):
        labels, _, inertia = K.hard_assign(self.X, C, self.w, False)
        return labels, float(inertia), label_counts(labels, C.shape[0])

    def cell_labels(self, C: np.ndarray) -> np.ndarray:
        return self.labels(C)

    def transfers(self, C: np.ndarray, max_sweeps: int):
        labels = K.hard_assign(self.X, C, self.w, False)[0]
        centers, _, sweeps, _, _ = K.transfer_sweeps(self.X, self.w, labels, C.shape[0], max_sweeps)
        return centers, sweeps

    def host_weights(self) -> np.ndarray:
        return self.w

    def take(self, index: np.ndarray) -> np.ndarray:
        return K.take_rows(self.X, index)

    def nearest(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        labels, mind, _ = K.hard_assign(self.X, C, self.w, True)
        return labels, mind

    def greedy_seeds(self, uniforms: np.ndarray, sample: np.ndarray | None = None) -> np.ndarray:
        if sample is None:
            return greedy_seeds(self.X, self.w, uniforms)
        return sample[greedy_seeds(self._rows_at(sample), np.empty(0), uniforms)]

    def labels(self, C: np.ndarray) -> np.ndarray:
        return K.hard_assign(self.X, C, self.w, False)[0]

    def squared_distances(self, C: np.ndarray) -> np.ndarray:
        return K.squared_distances(self.X, C)

    def responsibilities(self, C: np.ndarray, sigma: float, mode: int) -> np.ndarray:
        return K.responsibilities(self.X, C, sigma, mode)

    def total_inertia(self, C: np.ndarray) -> float:
        return float(K.hard_assign(self.X, C, self.w, False)[2])


class InMemoryRows(PrunedRows, ArrayRows):
    """A validated, C-contiguous numpy array (a ``numpy.memmap`` too) and its
    weights (length 0: unit weights); its passes can be pruned."""

    def reduce(self, name: str, *args):
        size = PASSES[name].rows_per_block or self.n
        blocks = ((start, self.X[start : start + size]) for start in range(0, self.n, size))
        return fold(name, blocks, self.w, *args)

    def draw_weighted(self, m: int, key: int) -> tuple[np.ndarray, np.ndarray]:
        return draw_into(self, m, key, [(0, self.X)])

    def new_bounds(self, k: int) -> Bounds:
        """New bounds for ``k`` centers (the first pruned pass with them
        forms every distance)."""
        return Bounds(np.zeros(self.n, dtype=np.int32), np.zeros(self.n))

    def prunes(self, k: int) -> bool:
        """Enough centers, and distances not so cheap that forming them all
        costs less."""
        return k >= PRUNE_MIN_CLUSTERS and self.d * k > K.DIRECT_MAX

    def pruned_soft_stats(self, C: np.ndarray, sigma: float, mode: int, bounds: Bounds):
        """The soft :meth:`stats` at C by a pass that forms only a row's own
        distance where its bound puts every other center beyond the
        assignment's reach (:func:`fastrbfkm._kernels.pruned_soft_stats`), and
        the number of row-center distances it formed: ``(N, S, summary,
        evaluated)``. ``bounds`` (those of hard passes mean the same) is
        updated to C."""
        C64, carried = self._carried(C, bounds)
        N, S, summary, evaluated = K.pruned_soft_stats(
            self.X, C, self.w, float(sigma), mode, *carried
        )
        bounds.centers = C64
        return N, S, summary, int(evaluated)

    def _carried(self, C: np.ndarray, bounds: Bounds) -> tuple[np.ndarray, tuple]:
        """What a pruned pass at C takes from ``bounds``: ``(C64, args)``, the
        centers in float64 (the bounds' next ``centers``) and the kernels'
        arguments from the labels on (labels, lower bounds, shifts since the
        bounds' centers, half gaps, movers, whether this is the first pass,
        the relative rounding error of an expanded squared distance)."""
        C64 = C.astype(np.float64)
        first = bounds.centers is None
        shift = np.zeros(C.shape[0]) if first else center_moves(C64, bounds.centers)
        rounding = (self.d + ROUNDING_TERMS) * float(np.finfo(self.dtype).eps)
        args = (bounds.labels, bounds.lower, shift, half_gaps(C64), movers(shift), first, rounding)
        return C64, args

    def farthest_in_cells(self, C: np.ndarray, m: int, labels: np.ndarray) -> Farthest:
        return Farthest(*self.reduce("farthest_in_cells", C, m, labels))

    def pruned_stats(self, C: np.ndarray, bounds: Bounds):
        """The hard :meth:`stats` at C by a pass that skips the centers a row
        cannot be nearest to (:func:`fastrbfkm._kernels.pruned_hard_stats`),
        each cell's inertia and the number of row-center distances it formed:
        ``(N, S, summary, cells, evaluated)``. ``bounds`` is updated to C."""
        C64, carried = self._carried(C, bounds)
        N, S, summary, cells, evaluated = K.pruned_hard_stats(self.X, C, self.w, *carried)
        bounds.centers = C64
        return N, S, summary, cells, int(evaluated)

    def batch(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        index = np.sort(rng.integers(0, self.n, int(m)))
        return self.X[index], self.w[index] if self.w.size else self.w

    def as_given(self):
        """The data as a user's ``init`` callable takes it (the array)."""
        return self.X

    def largest_magnitude(self) -> float:
        return float(np.abs(self.X).max(initial=0.0))

    def _rows_at(self, index: np.ndarray) -> np.ndarray:
        return self.X[index]


class HardPasses:
    """The hard passes with ``k`` centers over some rows, of one Lloyd run
    or of several that follow one another (:func:`hard_passes`): here full
    passes, :meth:`Rows.stats` at ``sigma = 0``, :meth:`Rows.inertia` and
    :meth:`CellInertiaRows.cell_inertia`. What a pass returns depends
    only on its arguments and on this object, which the caller owns."""

    def __init__(self, rows: Rows):
        self.rows = rows

    def stats(self, C: np.ndarray):
        """``(N, S, summary)`` of the hard assignment to C."""
        return self.rows.stats(C, 0.0, K.HARD)

    def inertia(self, C: np.ndarray) -> float:
        """The weighted hard inertia at C."""
        return self.rows.inertia(C)[0]

    def farthest(self, C: np.ndarray, m: int) -> Farthest:
        """:meth:`Rows.farthest` at the centers of the last :meth:`stats`."""
        return self.rows.farthest(C, m)

    def cell_inertia(self, C: np.ndarray) -> np.ndarray | None:
        """Per center, the weighted inertia of its cell (``(k,)``), where
        the rows give it (:class:`CellInertiaRows`; None elsewhere)."""
        return self.rows.cell_inertia(C) if isinstance(self.rows, CellInertiaRows) else None


class PrunedHardPasses(HardPasses):
    """Hard passes pruned by bounds that every pass updates
    (:class:`Bounds`, from :meth:`PrunedRows.new_bounds`). They hold for any
    centers (a pass measures the shifts from the centers they were made
    at), so Lloyd runs that follow one another over the same rows with the
    same object (a fit's runs, a swap search's trials) need no full first
    pass; the labels do not depend on them. The measuring pass and the
    cells' inertia are pruned too: a row whose bound holds has its own
    distance formed alone, so they agree with a full pass's to rounding.

    Where the bounds fail for most rows (a pass forms more than
    ``PRUNE_HARD_GIVE_UP`` of the n k distances: data without clusters, or
    centers still moving far), the next passes are unpruned, 1, 2, 4, ... of
    them (at most ``PRUNE_HARD_WAIT_MAX``) after each pruned pass that fails
    again: plain passes (:meth:`Rows.stats`) but the last, a first pruned
    pass (new bounds, every distance formed), so that the next pruned pass
    judges bounds one step old, not loosened by every move of the wait (on
    embedding-like rows at k = 1024, stale bounds kept failing for 29 passes
    while fresh ones held from the seventh). The same labels, statistics
    and bits for any number of threads: the choice depends on counts only."""

    def __init__(self, rows: PrunedRows, k: int):
        super().__init__(rows)
        self.bounds = rows.new_bounds(k)
        self._wait = 0  # unpruned passes before the next pruned one
        self._backoff = 1  # how many after the next pruned pass that fails

    def stats(self, C: np.ndarray):
        if self._wait:
            self._wait -= 1
            if self._wait:
                return self.rows.stats(C, 0.0, K.HARD)
            self.bounds.centers = None  # the last one renews the bounds
        first = self.bounds.centers is None  # forms every distance: says nothing
        N, S, summary, _, evaluated = self.rows.pruned_stats(C, self.bounds)
        if not first and evaluated > PRUNE_HARD_GIVE_UP * self.rows.n * C.shape[0]:
            self._wait = self._backoff
            self._backoff = min(2 * self._backoff, PRUNE_HARD_WAIT_MAX)
        elif not first:
            self._backoff = 1
        return N, S, summary

    def inertia(self, C: np.ndarray) -> float:
        return float(self.stats(C)[2][K.INERTIA])

    def farthest(self, C: np.ndarray, m: int) -> Farthest:
        """From the labels of the last pass, when it was at C: one
        distance a row (:meth:`PrunedRows.farthest_in_cells`)."""
        at = self.bounds.centers
        if at is not None and np.array_equal(at, C):
            return self.rows.farthest_in_cells(C, m, self.bounds.labels)
        return self.rows.farthest(C, m)

    def cell_inertia(self, C: np.ndarray) -> np.ndarray:
        return self.rows.pruned_stats(C, self.bounds)[3]


def hard_passes(rows: Rows, k: int) -> HardPasses:
    """The hard passes with ``k`` centers over ``rows``: pruned where the
    rows can prune (:class:`PrunedRows`) and it pays. The caller owns the
    result and hands it to the Lloyd runs that should carry its state from
    one to the next (:func:`fastrbfkm.lloyd.run_lloyd`'s ``passes``)."""
    if isinstance(rows, PrunedRows) and rows.prunes(k):
        return PrunedHardPasses(rows, k)
    return HardPasses(rows)


def soft_passes(rows: Rows) -> Rows | PrunedSoftPasses:
    """What a run of soft passes over ``rows`` (an annealing, soft Lloyd at
    one temperature) calls :meth:`~Rows.stats` on: a
    :class:`PrunedSoftPasses`, which carries the state one pass hands to
    the next, where the rows can prune (:class:`PrunedRows`), else the rows
    themselves, whose passes carry none."""
    return PrunedSoftPasses(rows) if isinstance(rows, PrunedRows) else rows


class PrunedSoftPasses:
    """The soft passes of one run over rows that can prune
    (:class:`PrunedRows`), pruned once most rows are one-hot: while the
    last soft pass left at most ``PRUNE_SOFT_SHARE`` of the weight soft,
    the next one skips the centers beyond a row's reach
    (:meth:`PrunedRows.pruned_soft_stats`); a hotter pass forms every
    distance. The run owns this state (from :func:`soft_passes`): the
    rows' own :meth:`~Rows.stats` carry none."""

    def __init__(self, rows: InMemoryRows):
        self.rows = rows
        # one set of bounds, for the last k (an annealing goes through
        # many), and the share of the weight the last soft pass left soft
        self._bounds: dict[int, Bounds] = {}
        self._share = 1.0

    def stats(self, C: np.ndarray, sigma: float, mode: int, with_stats: bool = True):
        """:meth:`Rows.stats`, pruned where the last pass allows it."""
        rows = self.rows
        k = C.shape[0]
        if not (with_stats and sigma > 0.0 and mode != K.HARD and rows.prunes(k)):
            return rows.stats(C, sigma, mode, with_stats)
        bounds = self._bounds.get(k)
        if bounds is None:
            # New centers (a split changed k): the first pass is unpruned, as
            # a first pruned pass forms every distance at more cost, and it
            # measures how soft the rows are.
            bounds = Bounds(np.zeros(rows.n, dtype=np.int32), np.zeros(rows.n))
            self._bounds = {k: bounds}
            self._share = 1.0
        if self._share > PRUNE_SOFT_SHARE:
            N, S, summary = rows.stats(C, sigma, mode, with_stats)
        else:
            N, S, summary, _ = rows.pruned_soft_stats(C, sigma, mode, bounds)
        self._share = float(summary[K.SOFT]) / rows.weight
        return N, S, summary


class SparseRows(ArrayRows):
    """Validated CSR data (:class:`fastrbfkm._kernels.CSR`: canonical, the
    kernels take it as they take an array) and its weights; never densified.

    Every pass runs the kernels as for dense rows. What differs: the
    moments and the d x d scatter of narrow data (up to ``DENSE_MAX``
    features) come from dense blocks of rows, the moments of wider data from
    the nonzeros, and rows taken out to be centers are
    densified while rows taken out as data (the annealing sample, a
    mini-batch) stay CSR, and the hard passes are not pruned (their kernel
    is dense only).
    """

    sparse = True

    def reduce(self, name: str, *args):
        size = PASSES[name].rows_per_block or self.n
        blocks = (
            (start, K.row_block(self.X, start, min(self.n, start + size)))
            for start in range(0, self.n, size)
        )
        return fold(name, blocks, self.w, *args)

    def as_given(self):
        """The data as a scipy CSR matrix (sharing the arrays)."""
        from scipy.sparse import csr_matrix

        X = self.X
        return csr_matrix((X.data, X.indices, X.indptr), shape=X.shape, copy=False)

    def largest_magnitude(self) -> float:
        return float(np.abs(self.X.data).max(initial=0.0))

    def _dense_blocks(self):
        """``(offset, block)`` of the rows densified, in blocks of at most
        ``MOMENT_ENTRIES`` entries (for narrow data only)."""
        step = max(1, min(MOMENT_ROWS, MOMENT_ENTRIES // self.d))
        for start in range(0, self.n, step):
            yield start, K.take_rows(self.X, np.arange(start, min(self.n, start + step)))

    def moments(self, weighted: bool = True) -> Moments:
        if self.d <= DENSE_MAX:
            return fold("moments", self._dense_blocks(), self.w, weighted)
        X, n, d = self.X, self.n, self.d
        weights = self.w if weighted and self.w.size else np.ones(n)
        total = float(weights.sum())
        columns = X.indices
        share = weights[np.repeat(np.arange(n), np.diff(X.indptr))]
        values = X.data.astype(np.float64)
        mean = np.bincount(columns, share * values, minlength=d) / total
        # around the mean: the nonzeros' deviations, and the zeros' (-mean)
        dev = values - mean[columns]
        zeros = total - np.bincount(columns, share, minlength=d)
        scatter = np.bincount(columns, share * dev * dev, minlength=d) + zeros * mean * mean
        return _moments_finish((total, mean, scatter))

    def _dense_fold(self, name: str, *args):
        """The pass ``name`` over dense blocks of rows (narrow data only)."""
        if self.d > DENSE_MAX:
            raise ValueError(f"no d x d scatter above {DENSE_MAX} features (Lanczos instead)")
        return fold(name, self._dense_blocks(), self.w, *args)

    def scatter(self, C: np.ndarray, sigma: float, mode: int):
        return self._dense_fold("scatter", C, sigma, mode)

    def scatter_and_cells(self, C: np.ndarray, sigma: float, mode: int):
        return self._dense_fold("scatter_and_cells", C, sigma, mode)

    def cell_summary(self, C: np.ndarray, scatter: bool) -> CellSummary:
        """With the scatter, over dense blocks of rows (as :meth:`scatter`)."""
        if not scatter:
            return super().cell_summary(C, False)
        return CellSummary.of(self._dense_fold("cell_summary", C, True))

    def batch(self, m: int, rng: np.random.Generator):
        index = np.sort(rng.integers(0, self.n, int(m)))
        return take_csr(self.X, index), self.w[index] if self.w.size else self.w

    def _rows_at(self, index: np.ndarray) -> K.CSR:
        return take_csr(self.X, index)


def take_csr(X: K.CSR, index: np.ndarray) -> K.CSR:
    """Rows ``X[index]`` as a new CSR (their arrays copied)."""
    starts = X.indptr[index]
    lengths = X.indptr[index + 1] - starts
    indptr = np.zeros(index.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    take = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1])
    return K.CSR(X.data[take], X.indices[take], indptr, X.n_cols)


def in_memory(X, w: np.ndarray, metric: Metric = METRICS["euclidean"]) -> ArrayRows:
    """The rows source of data in memory: dense, or CSR; ``metric``: the
    metric whose projection the rows went through already (:attr:`Rows.metric`)."""
    rows = SparseRows(X, w) if isinstance(X, K.CSR) else InMemoryRows(X, w)
    rows.metric = metric
    return rows


def annealing_sample(rows: Rows, m: int, key: int) -> ArrayRows:
    """The rows a fit anneals, in memory: with more than ``m`` rows, ``m``
    distinct rows drawn as by :meth:`Rows.draw`, each weighing ``weight / m``
    (the sample stands for the whole mass); else every row with its own
    weight (the source itself when it is in memory already). A CSR matrix's
    sample stays sparse (its drawn rows' slices). The sample is on the
    sphere (under the metric) when the source is."""
    if isinstance(rows, ArrayRows) and rows.n <= m:
        return rows
    if isinstance(rows, SparseRows):
        keys = draw_keys(rows.w, 0, rows.n, key)
        index = np.sort(np.argsort(-keys, kind="stable")[:m])
        return in_memory(take_csr(rows.X, index), np.full(m, rows.weight / m), rows.metric)
    X, weights = rows.draw_weighted(min(m, rows.n), key)
    if rows.n > m:
        weights = np.full(m, rows.weight / m)
    return in_memory(X, weights, rows.metric)
