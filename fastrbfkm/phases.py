"""How many clusters: the number read off the annealing's phase transitions.

As the temperature falls, deterministic annealing splits its centers at
critical temperatures (:mod:`fastrbfkm.annealing`); between two splits the
number of distinct clusters stays put. A count that lasts over a long range
of temperatures is one the data supports at many length scales, and the one
that lasts longest (in log sigma) is the data's natural count (Rose 1998,
"cluster validity"). :func:`phase_diagram` runs the annealing, converged at
every temperature, with up to ``max_clusters`` centers, and records the
counts, the splits and the tree they grow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

from ._axes import largest_variance
from ._backend import open_rows
from ._deprecation import REMOVED_IN, renamed, warn
from ._rows import Rows, annealing_sample
from ._threads import one_blas_thread
from ._validation import (
    as_float_array,
    check_count,
    check_generator,
    check_real,
    check_sigma,
    check_soft_assignment,
)
from .annealing import (
    AnnealPlan,
    AnnealSettings,
    SplitLog,
    auto_anneal_size,
    critical_from_variance,
    run_anneal,
)

__all__ = ["PhaseDiagram", "Split", "distinct_clusters", "phase_diagram"]

#: A split is tried from this factor above its predicted critical
#: temperature, so that the temperature at which it opens is observed: the
#: tries above the true critical temperature close again.
_TRY_ABOVE = 1.25

#: The defaults of :func:`phase_diagram`, which ``RBFKMeans(n_clusters="auto")``
#: uses too.
DEFAULT_MAX_CLUSTERS = 10
DEFAULT_COOLING = 0.9
DEFAULT_TOL = 1e-8


class Split(NamedTuple):
    """One split of the annealing that lasted (was not undone).

    Attributes
    ----------
    center : int
        The center that split.
    partner : int
        The spare center that split off it.
    sigma : float
        The observed critical temperature: the temperature at which the
        split opened up and stayed open.
    predicted : float
        The critical temperature predicted for the center at the
        temperature before (``2 lambda_max`` of its local covariance for
        softmax; see :func:`fastrbfkm.critical_temperature`).
    closed_at : float or None
        The coldest temperature at which an earlier try of the same center
        closed again (the true critical temperature lies between ``sigma``
        and it), None when the first try opened.
    """

    center: int
    partner: int
    sigma: float
    predicted: float
    closed_at: float | None

    @property
    def observed(self) -> float:
        """The observed critical temperature: the geometric mean of
        ``sigma`` and ``closed_at`` when an earlier try closed (the true one
        lies between them), else ``sigma`` (a lower bound: the split opened
        at its first try)."""
        if self.closed_at is None:
            return self.sigma
        return float(np.sqrt(self.sigma * self.closed_at))


@dataclass
class PhaseDiagram:
    """The record of :func:`phase_diagram`: per temperature visited, the
    number of distinct clusters, the objective (the free energy) and the
    inertia; the splits, and the tree they grow.

    Attributes
    ----------
    sigmas : ndarray of shape (T,)
        The temperatures visited, decreasing.
    n_clusters : ndarray of shape (T,)
        Distinct clusters at every temperature (:func:`distinct_clusters`).
    n_active : ndarray of shape (T,)
        Distinct centers taking part in the annealing (never fewer than
        ``n_clusters``: centers that have just split are still within the
        temperature's resolution of each other).
    objective : ndarray of shape (T,)
        The objective, the free energy ``F_sigma`` (:func:`fastrbfkm.objective`),
        of the distinct centers, as :class:`~fastrbfkm.AnnealPath`'s
        ``objective``. (Called ``free_energy`` before 0.2; that name still
        works, with a ``FutureWarning``.)
    inertia : ndarray of shape (T,)
        The K-Means inertia at those centers.
    centers : ndarray of shape (T, max_clusters, n_features)
        The centers at every temperature (spares on the center they are
        parked on).
    splits : list of Split
        The splits that lasted, in the order they happened.
    cluster_centers : ndarray of shape (m, n_features)
        The distinct centers at the last temperature, the leaves of
        ``linkage``.
    linkage : ndarray of shape (m - 1, 4)
        The split tree as a scipy linkage matrix over ``cluster_centers``
        (``scipy.cluster.hierarchy.dendrogram(diagram.linkage)`` draws it):
        row ``i`` joins the clusters ``linkage[i, 0]`` and ``linkage[i, 1]``
        at the height ``linkage[i, 2]``, the temperature at which they
        split apart, into a cluster of ``linkage[i, 3]`` leaves.
    persistence : dict of int to float
        For every count from 2 to ``max_clusters - 1`` that was seen, how
        long it lasted: the sum of ``log(sigma_t / sigma_{t+1})`` over the
        temperatures at which it held.
    n_clusters_ : int
        The recommended count: the one in ``persistence`` that lasted
        longest (the smaller on a tie); ``max_clusters`` when no count
        below it was seen.
    max_clusters : int
        The most centers the annealing had.
    assignment : str
        The soft assignment used.
    """

    sigmas: np.ndarray
    n_clusters: np.ndarray
    n_active: np.ndarray
    objective: np.ndarray
    inertia: np.ndarray
    centers: np.ndarray
    splits: list
    cluster_centers: np.ndarray
    linkage: np.ndarray
    persistence: dict
    n_clusters_: int
    max_clusters: int
    assignment: str

    def __len__(self) -> int:
        return len(self.sigmas)

    @property
    def free_energy(self) -> np.ndarray:
        """The old name of ``objective`` (before 0.2), with a ``FutureWarning``."""
        warn(
            f"PhaseDiagram.free_energy is now called PhaseDiagram.objective; free_energy "
            f"stops working in {REMOVED_IN}."
        )
        return self.objective

    def labels_of_centers(self, n_clusters: int) -> np.ndarray:
        """Which of ``n_clusters`` branches of the split tree every leaf
        (row of ``cluster_centers``) belongs to, numbered from 0."""
        if len(self.cluster_centers) == 1:
            return np.zeros(1, dtype=np.int64)
        return fcluster(self.linkage, n_clusters, "maxclust").astype(np.int64) - 1


def distinct_clusters(C, sigma: float) -> int:
    """Number of distinct clusters among ``centers`` at temperature ``sigma``.

    Two centers count as one while the sum of their kernels
    ``exp(-||x - c||^2 / sigma)`` has a single mode, that is while they are
    closer than ``sqrt(2 sigma)`` (two equal Gaussians of variance ``s^2``
    per feature are bimodal beyond a separation of ``2 s``, and the kernel's
    variance is ``sigma / 2``); chains of such centers count once (single
    linkage).

    Parameters
    ----------
    C : array-like of shape (k, d)
        The centers.
    sigma : float
        The temperature, >= 0 (at 0 only equal centers count once).

    Returns
    -------
    count : int
    """
    C = as_float_array(C, "C", dtype=np.float64, coordinates=True)
    sigma = check_sigma(sigma)
    C = np.unique(C, axis=0)
    if len(C) < 2:
        return len(C)
    groups = fcluster(linkage(C, "single"), np.sqrt(2.0 * sigma), "distance")
    return int(groups.max())


@one_blas_thread
@renamed(sample_size="anneal_size")
def phase_diagram(
    X,
    max_clusters: int = 10,
    *,
    assignment: str = "softmax",
    sample_weight=None,
    cooling: float = 0.9,
    max_iter: int = 200,
    tol: float = 1e-8,
    anneal_size: int | str | None = "auto",
    random_state: int | np.random.Generator | None = None,
) -> PhaseDiagram:
    """Anneal up to ``max_clusters`` centers and read the number of clusters
    off the phase transitions.

    The annealing starts above the critical temperature with every center
    on the weighted mean and cools geometrically, converging the soft Lloyd
    step at every temperature. A center splits when the temperature falls
    below its critical temperature (``2 lambda_max`` of the covariance of
    its soft cell for softmax); splits are tried from 1.25 times the
    predicted value down, and those that close again are undone, so the
    temperature at which each split opens is observed. At every temperature
    the distinct clusters are counted (:func:`distinct_clusters`); the run
    ends when all ``max_clusters`` centers are distinct clusters.

    The recommended count ``n_clusters_`` is the count below
    ``max_clusters`` that lasts longest in log sigma (the largest
    ``persistence``). Counts near ``max_clusters`` are cut short by the end
    of the run, so give ``max_clusters`` well above the count you expect
    (about twice it).

    Parameters
    ----------
    X : array-like, scipy.sparse matrix, numpy.memmap or dask.array.Array of shape (n, d)
        Data. More rows than ``anneal_size`` are annealed as a seeded
        random sample of that many.
    max_clusters : int, default=10
        Most centers, at least 2.
    assignment : {"softmax", "entmax15"}, default="softmax"
        The soft assignment. Softmax's critical temperatures are exact (the
        classical deterministic annealing); entmax15's are estimates. The
        default is softmax, unlike everywhere else (entmax15), for that
        reason: the counts are read off the observed critical temperatures,
        and ``RBFKMeans(n_clusters="auto")`` reads them off softmax's too,
        whatever its own ``assignment``.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights with a positive sum.
    cooling : float in (0, 1), default=0.9
        Factor between temperatures: the resolution of the observed
        critical temperatures.
    max_iter : int, default=200
        Most soft Lloyd steps at one temperature.
    tol : float, default=1e-8
        Convergence at a temperature when the squared shift of the centers
        in one step is at most ``tol`` times the mean feature variance.
    anneal_size : int, "auto" or None, default="auto"
        Rows annealed, as :class:`~fastrbfkm.RBFKMeans`'s ``anneal_size``:
        "auto" is as there, for ``max_clusters`` clusters (20000 rows up to
        128);
        None anneals every row. (Called ``sample_size`` before 0.2; that
        name still works, with a ``FutureWarning``.)
    random_state : int, Generator or None, default=None
        Seeds the sample and the symmetry breaking.

    Returns
    -------
    diagram : PhaseDiagram

    Examples
    --------
    >>> import numpy as np
    >>> import fastrbfkm as fk
    >>> rng = np.random.default_rng(0)
    >>> means = np.array([[0.0, 0.0], [20.0, 0.0], [0.0, 20.0]])
    >>> X = np.concatenate([m + rng.normal(size=(200, 2)) for m in means])
    >>> fk.phase_diagram(X, max_clusters=8, random_state=0).n_clusters_
    3
    """
    mode = check_soft_assignment(assignment)
    max_clusters = check_count(max_clusters, "max_clusters", 2)
    cooling = check_real(cooling, "cooling")
    if not 0 < cooling < 1:
        raise ValueError(f"cooling must be in (0, 1); got {cooling!r}.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}.")
    tol = check_real(tol, "tol")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be finite and >= 0; got {tol!r}.")
    if anneal_size == "auto":
        m = auto_anneal_size(int(max_clusters))
    elif anneal_size is None:
        m = None
    elif isinstance(anneal_size, (int, np.integer)) and not isinstance(anneal_size, bool):
        if anneal_size < 2:
            raise ValueError(f"anneal_size must be an integer >= 2; got {anneal_size}.")
        m = int(anneal_size)
    else:
        raise TypeError(f"anneal_size must be an integer, 'auto' or None; got {anneal_size!r}.")
    rng = check_generator(random_state)
    rows = open_rows(X, sample_weight, "cpu", n_clusters=max_clusters, fit=True)
    if max_clusters > rows.n:
        raise ValueError(f"n_samples={rows.n} should be >= max_clusters={max_clusters}.")
    return diagram_of_rows(rows, int(max_clusters), mode, cooling, int(max_iter), tol, m, rng)


def diagram_of_rows(
    rows: Rows,
    k: int,
    mode: int,
    cooling: float,
    max_iter: int,
    tol: float,
    anneal_size: int | None,
    rng: np.random.Generator,
) -> PhaseDiagram:
    """:func:`phase_diagram` over a rows source, its parameters checked."""
    key = int(rng.integers(2**63))
    if anneal_size is not None:
        rows = annealing_sample(rows, anneal_size, key if rows.n > anneal_size else 0)
    moments = rows.moments()
    scale2 = float(moments.variance.sum()) / rows.d
    sigma_c = critical_from_variance(largest_variance(rows, moments), k, mode)
    if not sigma_c > 0:
        raise ValueError("X has no spread (all its rows are the same point): nothing splits.")
    C = np.repeat(moments.mean[None, :], k, axis=0).astype(rows.dtype)
    plan = AnnealPlan.for_diagram(sigma_c, cooling, max_iter, 1.0 / _TRY_ABOVE - 1.0)
    settings = AnnealSettings(plan, tol * scale2, scale2, record_all=False)
    counts = []

    def count(t, sigma, centers, summary, its) -> bool:
        counts.append(distinct_clusters(centers, sigma))
        return counts[-1] >= k  # every center is a cluster of its own

    log = SplitLog()
    path = run_anneal(rows, C, mode, settings, rng, callback=count, log=log)
    splits, tree, leaves = _split_tree(log)
    n_clusters = np.array(counts, dtype=np.int64)
    # A try that closed at a temperature was one cluster there, whatever its
    # two centers' distance when the try was given up.
    closed: dict[int, list[int]] = {}
    for event in log.events:
        if event[0] == "close":
            closed.setdefault(event[1], []).append(event[2])
    for t, spares in closed.items():
        kept = np.delete(path.centers[t], spares, axis=0)
        n_clusters[t] = distinct_clusters(kept, path.sigmas[t])
    persistence = _persistence(path.sigmas, n_clusters, k)
    best = max(persistence, key=lambda c: (persistence[c], -c)) if persistence else k
    return PhaseDiagram(
        sigmas=path.sigmas,
        n_clusters=n_clusters,
        n_active=path.n_active,
        objective=path.objective,
        inertia=path.inertia,
        centers=path.centers,
        splits=splits,
        cluster_centers=path.centers[-1][leaves],
        linkage=tree,
        persistence=persistence,
        n_clusters_=int(best),
        max_clusters=k,
        assignment=path.assignment,
    )


def _persistence(sigmas: np.ndarray, counts: np.ndarray, k: int) -> dict:
    """How long, in log sigma, every count from 2 to k - 1 held."""
    spans = np.log(sigmas[:-1] / sigmas[1:])
    out: dict[int, float] = {}
    for c, span in zip(counts[:-1].tolist(), spans.tolist(), strict=True):
        if 2 <= c < k:
            out[c] = out.get(c, 0.0) + span
    return dict(sorted(out.items()))


def _split_tree(log: SplitLog):
    """The splits that lasted, and their tree over the final distinct centers.

    The log is replayed in order. Every center belongs to a lineage, born
    at its split; a split that closes again is forgotten (its center's
    failed try is remembered for ``closed_at``), and a center that merges
    into another hands its later splits to the other's lineage.
    """
    lineage = {0: 0}  # center -> lineage; center 0 holds the first lineage
    next_lineage = 1
    born: dict[int, tuple] = {}  # lineage -> (parent lineage, Split)
    failed: dict[int, float] = {}  # center -> coldest closed try since its last split
    tries: dict[int, tuple] = {}  # partner -> the split it came from, until it lasts
    for event in log.events:
        if event[0] == "split":
            _, _t, sigma, center, partner, predicted = event
            tries[partner] = (center, sigma, predicted)
            lin = next_lineage
            next_lineage += 1
            split = Split(center, partner, sigma, predicted, failed.pop(center, None))
            born[lin] = (lineage[center], split)
            lineage[partner] = lin
        elif event[0] == "close":
            partner = event[2]
            center, sigma, _ = tries.pop(partner)
            born.pop(lineage.pop(partner))
            failed[center] = sigma
        else:  # merge: the center's lineage goes on as the other's
            _, center, into = event
            lin = lineage.pop(center)
            target = lineage[into]
            born.pop(lin, None)
            born.update({c: (target if p == lin else p, s) for c, (p, s) in born.items()})
            lineage.update({c: (target if v == lin else v) for c, v in lineage.items()})
    # The leaves: the distinct centers at the end, one per live lineage.
    live = sorted(lineage.items(), key=lambda cv: cv[1])
    leaf_of = {v: i for i, (_, v) in enumerate(live)}
    leaves = np.array([c for c, _ in live], dtype=np.int64)
    node = dict(leaf_of)
    height = {i: 0.0 for i in node.values()}
    size = {i: 1 for i in node.values()}
    rows = []
    next_id = len(live)
    for lin, (parent, split) in sorted(born.items(), key=lambda kv: kv[1][1].sigma):
        if lin not in node or parent not in node:
            continue
        a, b = node[parent], node[lin]
        h = max(split.sigma, height[a], height[b])
        rows.append([min(a, b), max(a, b), h, size[a] + size[b]])
        height[next_id] = h
        size[next_id] = size[a] + size[b]
        node[parent] = next_id
        next_id += 1
    splits = [s for _, (_, s) in sorted(born.items())]
    tree = np.array(rows, dtype=np.float64).reshape(-1, 4)
    return splits, tree, leaves
