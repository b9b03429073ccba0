"""Deterministic annealing: the annealing plan, the critical temperature,
and warm-started soft Lloyd steps down a decreasing sequence of temperatures
(the schedule, from :mod:`fastrbfkm._schedule`).

At a fixed temperature the soft Lloyd step ``c_k <- m_k`` (see
docs/conventions.md) is iterated to a fixed point; the next, colder
temperature starts from it.
Above the critical temperature the only stable fixed point puts every center
on the weighted mean (Rose 1998), and coincident centers never separate by
themselves: exact copies are spares, parked until the temperature falls below
the critical value of an active center, which then splits one off with a tiny
seeded perturbation (Rose's symmetry breaking; the spares' moves are
:class:`fastrbfkm._spares.Spares`). docs/annealing.md describes how
RBFKMeans uses these pieces.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from . import _kernels as K
from ._axes import forms_scatter, largest_variance, principal, spreads_and_cells
from ._backend import open_rows
from ._deprecation import keyword_only, renamed, warn
from ._model import assignment_of
from ._rows import PrunedSoftPasses, Rows, soft_passes
from ._schedule import GeometricSchedule, GivenSchedule, Schedule
from ._spares import Candidates, Spares
from ._sphere import resultant
from ._threads import one_blas_thread
from ._tunables import (
    ANNEAL_ROWS_MIN,
    ANNEAL_ROWS_PER_CENTER,
    MANY_CLUSTERS,
    MERGE_RADIUS,
    PERTURBATION,
    SPLIT_GAIN_RATIO,
    SPLIT_MARGIN,
    SPLIT_OPENING_GROWTH,
    SPLIT_RTOL,
    TAIL_STEPS,
)
from ._validation import (
    as_float_array,
    check_count,
    check_generator,
    check_real,
    check_soft_assignment,
)

#: The public API; the rest serves the estimator and the paper's run.
__all__ = ["AnnealPath", "anneal", "critical_temperature"]


@dataclass
class AnnealPath:
    """The record of an annealing run, one entry per temperature visited.

    Every value is that of the k recorded centers, as the public functions
    compute it: ``objective[t] == fastrbfkm.objective(X, centers[t],
    sigmas[t], assignment, sample_weight)``, and the inertia, supports and
    soft fraction likewise. Centers not yet split off (spares) are exact
    copies of an active center and count as centers there, as in any
    k-center model.

    The annealing itself iterates the soft Lloyd step over the
    ``n_active[t]`` distinct centers (``np.unique(centers[t], axis=0)``):
    where ``converged[t]``, those are its fixed points to the run's
    tolerance (a spare on top of its center would share that center's
    responsibilities, so the k-center step moves them; it is not the map
    being iterated). In :class:`fastrbfkm.RBFKMeans` ahead of ``refine`` a
    temperature gets only a few steps (``anneal_steps``), so ``converged``
    is mostly False there, and when the fit annealed a sample of the rows
    (``anneal_size``) the values are those of the sample, whose weights sum
    to X's total weight.

    Attributes
    ----------
    sigmas : ndarray of shape (T,)
        The temperatures, decreasing.
    centers : ndarray of shape (T, k, d)
        The centers at the end of every temperature.
    objective : ndarray of shape (T,)
        The free energy ``F_sigma`` of the k centers.
    inertia : ndarray of shape (T,)
        The K-Means inertia ``J_KM`` at those centers.
    support_mean : ndarray of shape (T,)
        Weighted mean number of centers with a positive responsibility.
    support_max : ndarray of shape (T,)
        Largest number of centers with a positive responsibility in a row.
    soft_fraction : ndarray of shape (T,)
        Weighted fraction of the points whose responsibilities are not one-hot.
    off_winner_max : ndarray of shape (T,)
        Largest responsibility mass off a row's winning center.
    n_iter : ndarray of shape (T,)
        Soft Lloyd steps taken at every temperature.
    converged : ndarray of shape (T,)
        Whether the tolerance was met within the steps allowed.
    n_active : ndarray of shape (T,)
        Distinct centers taking part. Exact copies among the initial
        centers are spares, parked on the center they were copies of until
        the annealing splits them off.
    assignment : str
        The assignment used.
    """

    sigmas: np.ndarray
    centers: np.ndarray
    objective: np.ndarray
    inertia: np.ndarray
    support_mean: np.ndarray
    support_max: np.ndarray
    soft_fraction: np.ndarray
    off_winner_max: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray
    n_active: np.ndarray
    assignment: str = "entmax15"

    def __len__(self) -> int:
        return len(self.sigmas)


@dataclass
class _PathBuilder:
    rows: list = field(default_factory=list)

    def add(self, sigma, C, summary, weight, n_iter, converged, n_active):
        self.rows.append((sigma, C.copy(), summary.copy(), weight, n_iter, converged, n_active))

    def build(self, assignment: str) -> AnnealPath:
        sig, cen, summ, weight, its, conv, act = zip(*self.rows, strict=True)
        S = np.array(summ)
        W = np.array(weight)
        return AnnealPath(
            sigmas=np.array(sig),
            centers=np.array(cen),
            objective=S[:, K.OBJECTIVE],
            inertia=S[:, K.INERTIA],
            support_mean=S[:, K.SUPPORT] / W,
            support_max=S[:, K.SUPPORT_MAX],
            soft_fraction=S[:, K.SOFT] / W,
            off_winner_max=S[:, K.OFF_WINNER_MAX],
            n_iter=np.array(its, dtype=np.int64),
            converged=np.array(conv, dtype=bool),
            n_active=np.array(act, dtype=np.int64),
            assignment=assignment,
        )


def auto_anneal_size(n_clusters: int) -> int:
    """Rows annealed by ``anneal_size="auto"`` for ``n_clusters`` centers
    (:class:`fastrbfkm.RBFKMeans`, :func:`fastrbfkm.phase_diagram`):
    ``ANNEAL_ROWS_MIN`` up to ``MANY_CLUSTERS`` centers; beyond, as many as
    keep the rows x centers of a soft pass at ``ANNEAL_ROWS_MIN x
    MANY_CLUSTERS``, or ``ANNEAL_ROWS_PER_CENTER`` a center where that is
    more (``fastrbfkm/_tunables.py``)."""
    k = int(n_clusters)
    held = ANNEAL_ROWS_MIN * MANY_CLUSTERS // max(k, MANY_CLUSTERS)
    return max(held, ANNEAL_ROWS_PER_CENTER * k)


def critical_from_variance(lam: float, n_clusters: int, mode: int) -> float:
    """``2 lambda_max`` (softmax) or ``2 sqrt(k) lambda_max`` (entmax15),
    from the largest eigenvalue ``lam`` of the covariance."""
    return 2.0 * lam * assignment_of(mode).critical_factor(n_clusters)


@keyword_only
def critical_temperature(
    X, n_clusters: int, assignment: str = "entmax15", *, sample_weight=None, metric="euclidean"
) -> float:
    """Temperature below which the all-centers-at-the-mean solution is unstable.

    The assignment's Jacobian at the uniform point is ``(1/k)(I - 11^T/k)``
    for softmax and ``k^{-1/2}(I - 11^T/k)`` for entmax15, so the first split
    happens at ``sigma_c = 2 lambda_max`` (softmax) and ``2 sqrt(k)
    lambda_max`` (entmax15), ``lambda_max`` being the largest eigenvalue of
    the weighted covariance of X.

    On the sphere (``metric="cosine"``: unit rows, the center at the mean's
    direction ``c``), ``lambda_max`` is the largest eigenvalue of the
    covariance projected onto the tangent space at ``c``, divided by the
    mean resultant length ``rho = ||mean||``: a split moves the pair along
    the sphere, and the restoring term of the free energy is ``c . x`` per
    row instead of 1, so ``sigma_c = 2 lambda_T / rho`` for softmax (and
    ``sqrt(k)`` times that for entmax15).

    Parameters
    ----------
    X : array-like, scipy.sparse matrix or dask.array.Array of shape (n, d)
        Data.
    n_clusters : int
        Number of centers k.
    assignment : {"entmax15", "softmax"}, default="entmax15"
        The soft assignment.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights with a positive sum.
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: of the rows at unit length, on the sphere.

    Returns
    -------
    sigma_c : float
    """
    mode = check_soft_assignment(assignment)
    n_clusters = check_count(n_clusters, "n_clusters")
    rows = open_rows(X, sample_weight, "cpu", fit=True, metric=metric)
    return critical_from_variance(largest_variance(rows, rows.moments()), n_clusters, mode)


@dataclass(frozen=True)
class AnnealPlan:
    """The annealing policy, in one place: its schedule of temperatures
    (:mod:`fastrbfkm._schedule`), how many soft steps a temperature gets,
    how centers split, when it stops.

    :class:`fastrbfkm.RBFKMeans` (:meth:`for_estimator`),
    :func:`fastrbfkm.phase_diagram` (:meth:`for_diagram`) and
    :func:`anneal` (:meth:`given`) run the schedule's temperatures with
    :func:`run_anneal` (:class:`AnnealSettings` adds the data's tolerance);
    :class:`fastrbfkm.MiniBatchRBFKMeans` (:meth:`for_batches`) walks the
    schedule one temperature at a time over its batches
    (:meth:`fastrbfkm._schedule.Schedule.next`, ``first_below``,
    ``ends_after``).

    Attributes
    ----------
    schedule : Schedule
        The temperatures.
    stop_when_hard : bool
        End after the first temperature at which every row is hard.
    skip_idle : bool
        Jump over the temperatures of the schedule at which nothing can
        happen: while the centers are converged and no spare center is
        waiting for an unstable center above the next temperature, go
        straight to the first temperature below the highest critical
        temperature among the centers that would get a spare.
    max_iter : int
        Most soft Lloyd steps at one temperature.
    tail_iter : int or None
        Most soft steps at one temperature once every center is active (None:
        ``max_iter``). Ahead of hard Lloyd iterations the splitting phase
        needs only a few steps per temperature, the tail more: there the
        centers settle into the basin the hard iterations finish in.
    perturbation : float
        Size of the symmetry-breaking nudge, relative to the spread of the
        center being split along its principal axis.
    split_margin : float
        A candidate splits at the next temperature when its critical
        temperature is above that temperature times ``1 + split_margin``; a
        negative margin tries splits above the predicted critical
        temperature (those that close again are undone), so that the
        temperature at which a split opens is observed, not assumed.
    gain_ratio : float
        Of the candidates unstable at the next temperature, only those whose
        expected split gain is at least this fraction of the largest among
        them split there (:meth:`fastrbfkm._spares.Candidates.splitting`);
        0 splits them all.
    """

    schedule: Schedule
    stop_when_hard: bool = False
    skip_idle: bool = False
    max_iter: int = 1000
    tail_iter: int | None = None
    perturbation: float = PERTURBATION
    split_margin: float = SPLIT_MARGIN
    gain_ratio: float = SPLIT_GAIN_RATIO

    @classmethod
    def for_estimator(
        cls,
        sigma,
        sigma_min,
        cooling: float,
        sigma_c: float | None,
        dtype,
        guided: bool,
        anneal_steps: int,
        max_iter: int,
    ) -> AnnealPlan | None:
        """The plan of a soft :class:`fastrbfkm.RBFKMeans` fit: from just
        above the critical temperature (``sigma="auto"``: ``sigma_c /
        cooling``) or at ``sigma``, down to ``sigma_min`` or, with neither
        given, until every row is hard (or ``start`` times the dtype's
        resolution), skipping idle temperatures. A fit that ``refine``
        finishes (``guided``) takes a few steps a temperature
        (``anneal_steps``, then ``TAIL_STEPS``). None when there is nothing
        to anneal (no spread at all: every center stays on the mean)."""
        start = sigma_c / cooling if sigma == "auto" else float(sigma)
        if start <= 0:
            return None
        if sigma_min is not None:
            stop = float(sigma_min)
        elif sigma == "auto":
            stop = start * np.finfo(dtype).eps
        else:
            stop = None
        auto = sigma_min is None and sigma == "auto"
        schedule = GeometricSchedule(start, cooling, stop)
        steps = guided and len(schedule.temperatures()) > 1  # a few steps a temperature
        return cls(
            schedule,
            stop_when_hard=auto,
            skip_idle=auto,
            max_iter=int(anneal_steps if steps else max_iter),
            tail_iter=TAIL_STEPS if steps else None,
        )

    @classmethod
    def for_batches(cls, sigma_c: float, cooling: float, perturbation: float) -> AnnealPlan:
        """The plan of :class:`fastrbfkm.MiniBatchRBFKMeans`: from the
        critical temperature of its probe rows down by ``cooling`` a
        temperature, at most to the float64 resolution below it, splits
        nudged by ``perturbation``."""
        stop = sigma_c * np.finfo(np.float64).eps
        return cls(GeometricSchedule(sigma_c, float(cooling), stop), perturbation=perturbation)

    @classmethod
    def for_diagram(
        cls, sigma_c: float, cooling: float, max_iter: int, split_margin: float
    ) -> AnnealPlan:
        """The plan of :func:`fastrbfkm.phase_diagram`: from just above the
        critical temperature (``sigma_c / cooling``) down by ``cooling`` a
        temperature, at most to the float64 resolution below ``sigma_c``,
        skipping idle temperatures, with splits tried at ``split_margin``
        and every unstable center splitting (the temperature at which each
        split opens is what the diagram records)."""
        stop = sigma_c * np.finfo(np.float64).eps
        return cls(
            GeometricSchedule(sigma_c / cooling, cooling, stop),
            skip_idle=True,
            max_iter=max_iter,
            split_margin=split_margin,
            gain_ratio=0.0,
        )

    @classmethod
    def given(
        cls,
        temperatures: np.ndarray,
        max_iter: int,
        perturbation: float,
        stop_when_hard: bool,
    ) -> AnnealPlan:
        """A schedule given as it is (:func:`anneal`), no skipping, every
        unstable center splitting at once (the textbook annealing, converged
        at every temperature, whose path the paper's results measure)."""
        return cls(
            GivenSchedule(temperatures),
            stop_when_hard=stop_when_hard,
            max_iter=int(max_iter),
            perturbation=perturbation,
            gain_ratio=0.0,
        )

    @property
    def open_ended(self) -> bool:
        """Whether the run may end before the schedule does (when the rows
        are hard): its length is then only a bound."""
        return self.stop_when_hard


@dataclass(frozen=True)
class AnnealSettings:
    """How :func:`run_anneal` follows a plan on its data.

    Attributes
    ----------
    plan : AnnealPlan
        The temperatures, the steps a temperature, the splits.
    tol : float
        Absolute tolerance on the squared shift of the centers in one step.
    scale2 : float
        The data's mean feature variance (sets the rounding floor of ``tol``).
    record_all : bool
        Record the free energy and the supports of the k-center model at
        every temperature, spares included (one more pass at the
        temperatures where spares are parked). Without it they are those of
        the active centers.
    """

    plan: AnnealPlan
    tol: float
    scale2: float
    record_all: bool = True


def run_anneal(
    rows: Rows,
    C: np.ndarray,
    mode: int,
    settings: AnnealSettings,
    rng: np.random.Generator,
    callback: Callable[[int, float, np.ndarray, np.ndarray, int], bool | None] | None = None,
    log: SplitLog | None = None,
) -> AnnealPath:
    """Anneal the centers C over a rows source down the temperatures of
    ``settings.plan.schedule``.

    Exact copies among the initial centers are spares
    (:class:`fastrbfkm._spares.Spares`): they are parked on the first of
    their group and take no part until
    :meth:`~fastrbfkm._spares.Spares.split_unstable` splits them off where
    the data needs another center.

    At each temperature the soft Lloyd step is repeated until the squared
    shift is ``<= tol`` and no longer growing, and the pairs split apart
    before it have stopped opening up (their gap grows by less than 1% a
    step), at least twice and at most ``max_iter`` times.

    ``callback(t, sigma, C, summary, iterations)`` is called after every
    temperature; a true return value ends the run there. ``log`` records
    every split tried, and which of them closed or merged again.
    """
    plan = settings.plan
    sigmas = plan.schedule.temperatures()
    weight = rows.weight
    eps = float(np.finfo(rows.dtype).eps)
    noise = (100.0 * eps) ** 2 * settings.scale2 * C.shape[0]
    floor = max(1e-6 * settings.tol, noise)
    tol = max(settings.tol, noise)
    path = _PathBuilder()
    passes = soft_passes(rows)  # the soft passes of this run, and their state
    C = C.astype(rows.dtype, copy=True)
    spares = Spares.of_copies(C)
    active = spares.active  # updated in place by the moves of spares
    t = 0
    while t < len(sigmas):
        sigma = sigmas[t]
        A, new, summary, it, converged, closed = _converge(
            rows,
            passes,
            np.ascontiguousarray(C[active]),
            sigma,
            mode,
            (plan.tail_iter or plan.max_iter) if spares.all_active else plan.max_iter,
            tol,
            floor,
            spares.fresh_rows(),
        )
        C[active] = A
        spares.sync(C)
        if settings.record_all and not spares.all_active:
            summary = passes.stats(C, sigma, mode)[2]  # the k-center model, spares included
        path.add(sigma, C, summary, weight, it, converged, spares.n_active)
        stop = callback is not None and callback(len(path.rows) - 1, sigma, C, summary, it)
        C[active] = new
        if stop or (plan.stop_when_hard and spares.all_active and is_hard(summary, mode)):
            break
        # A split that closed instead of opening was premature: the spare
        # goes back, and the center may try again at a colder temperature.
        for spare in spares.close(C, closed):
            if log is not None:
                log.close(len(path.rows) - 1, int(spare))
        # Centers much closer than the temperature's length scale get the same
        # responsibilities from every point: they act as one, and the second
        # is better used as a spare.
        for b in spares.settle(C, MERGE_RADIUS * np.sqrt(sigma)):
            if log is not None:
                log.merge(int(b), int(spares.parent[b]))
        t += 1
        if t < len(sigmas) and not spares.all_active:
            found = candidates(rows, C, active, sigma, mode, passes)
            margin = plan.split_margin
            if plan.skip_idle and converged and not found.unstable(sigmas[t], margin).any():
                # Nothing splits at the next temperature: go to the first one
                # at which a candidate does.
                below = np.flatnonzero(
                    found.critical.max(initial=0.0) > sigmas[t:] * (1.0 + margin)
                )
                t += int(below[0]) if below.size else len(sigmas) - 1 - t
            pairs = spares.split_unstable(
                C, found, sigmas[t], rng, plan.perturbation, margin, plan.gain_ratio
            )
            if log is not None:
                log.split(len(path.rows), float(sigmas[t]), pairs, found, margin, plan.gain_ratio)
        C[:] = rows.metric.centers(C)  # split, closed and merged centers projected
    return path.build(_name(mode))


def _converge(rows, passes, A, sigma, mode, max_iter, tol, floor, fresh):
    """Soft Lloyd steps on the active centers A at one temperature, the
    passes made by ``passes`` (:func:`~fastrbfkm._rows.soft_passes`).

    Returns ``(A, new, summary, iterations, converged, closed)``: the last
    centers whose statistics ``summary`` describes, one step further, and for
    each freshly split pair (``fresh``: two rows of A each) whether it closed
    instead of opening.
    """
    gap = np.linalg.norm(A[fresh[:, 0]].astype(np.float64) - A[fresh[:, 1]], axis=1)
    initial_gap = gap
    previous = np.inf
    converged = False
    for it in range(1, max_iter + 1):
        N, S, summary = passes.stats(A, sigma, mode)
        new = A.astype(np.float64)
        alive = N > 0
        new[alive] = S[alive] / N[alive, None]
        new = rows.metric.centers(new, A)
        shift = float(((new - A) ** 2).sum())
        # A fresh split is still opening up while its gap keeps growing.
        widths = np.linalg.norm(new[fresh[:, 0]] - new[fresh[:, 1]], axis=1)
        opening = bool((widths > SPLIT_OPENING_GROWTH * gap).any())
        gap = widths
        settled = shift <= previous or shift <= floor
        if it >= 2 and shift <= tol and settled and not opening:
            converged = True
            break
        if it < max_iter:
            previous = shift
            A = new.astype(rows.dtype)
    return A, new.astype(rows.dtype), summary, it, converged, gap <= initial_gap


def is_hard(summary: np.ndarray, mode: int) -> bool:
    """Whether every row was one-hot (entmax15) or within 1e-12 of it
    (softmax): the assignment's own test (:attr:`Assignment.is_hard
    <fastrbfkm._model.Assignment>`)."""
    return assignment_of(mode).is_hard(summary)


def candidates(
    rows: Rows,
    C: np.ndarray,
    active: np.ndarray,
    sigma: float,
    mode: int,
    passes: Rows | PrunedSoftPasses | None = None,
) -> Candidates:
    """Where the spare centers would go, and below which temperature each splits.

    An active center j with a coincident copy would split below
    ``sigma_c(j) = 2 lambda_max(M_j)``, where ``M_j`` is the covariance of
    the data around c_j weighted by the second derivative of the assignment
    (the global critical temperature of :func:`critical_temperature`
    applied to a pair of copies sharing the center's responsibilities: the
    posterior covariance for softmax, ``sqrt(2)`` times ``sum w sqrt(r) (x -
    c)(x - c)^T / sum w r`` for entmax15). Spares are kept for the centers
    whose split would lower the K-Means distortion most: the largest
    principal variance of their Voronoi cell times its mass (soft
    responsibilities would overstate it for centers that still share
    points), one spare each.

    On the sphere (``rows.sphere``) the spreads are along the sphere (the
    scatter projected onto each center's tangent space) and a center's
    critical temperature is divided by its mean resultant length ``c_j .
    S_j / N_j`` at ``sigma`` (the weighted sums ``S`` of the scatter's own
    pass where it forms them, else one more soft pass, by ``passes``, the
    run's :func:`~fastrbfkm._rows.soft_passes`, or the rows' own): the
    restoring term of a split on the sphere is ``c . x`` per unit
    responsibility, not 1.
    """
    chosen = np.flatnonzero(active)
    A = np.ascontiguousarray(C[chosen])
    if forms_scatter(rows):
        # one pass for both scatters; eigenvalues for all, eigenvectors only
        # for the centers that split
        soft, (mass, cell_spread, _), S = spreads_and_cells(rows, A, sigma, mode)
        N, values_of, axes_of = soft
    else:  # Lanczos: the soft and hard scatter's iterations share their passes
        (N, spread, axes), (mass, cell_spread, _) = principal(
            rows, A, sigma, mode, cells=True, rtol=SPLIT_RTOL
        )
        values_of = spread.__getitem__
        axes_of = partial(np.take, axes, axis=0)
        S = None
    factor = assignment_of(mode).split_factor
    gain = mass * cell_spread
    wanted = np.argsort(-gain, kind="stable")[: int(np.count_nonzero(~active))]
    spread = values_of(wanted)
    critical = 2.0 * factor * spread
    if rows.sphere:
        if S is None:  # not summed by the scatter's pass: a soft pass of its own
            N, S, _ = (passes or rows).stats(A, sigma, mode)
        critical = critical / resultant(A, N, S)[wanted]
    return Candidates(chosen[wanted], critical, spread, gain[wanted], axes_of, wanted)


@dataclass
class SplitLog:
    """What :func:`run_anneal` did to the set of active centers, in order:
    ``("split", t, sigma, center, partner, predicted)`` for a split tried at
    the temperature of index ``t`` (``sigma``; ``predicted`` the critical
    temperature :func:`candidates` gave the center), ``("close", t, partner)``
    when that split closed again at the temperature of index ``t`` (the
    partner went back to the spares) and ``("merge", center, into)`` when
    an active center came within the merge radius of another and became its
    spare."""

    events: list = field(default_factory=list)

    def split(
        self,
        t: int,
        sigma: float,
        pairs: np.ndarray,
        found: Candidates,
        margin: float,
        gain_ratio: float,
    ) -> None:
        predicted = found.critical[found.splitting(sigma, margin, gain_ratio)]
        for (j, spare), crit in zip(pairs.tolist(), predicted.tolist(), strict=True):
            self.events.append(("split", t, sigma, j, spare, crit))

    def close(self, t: int, partner: int) -> None:
        self.events.append(("close", t, partner))

    def merge(self, center: int, into: int) -> None:
        self.events.append(("merge", center, into))


def _name(mode: int) -> str:
    return assignment_of(mode).name


@renamed(C0="C")
@keyword_only
@one_blas_thread
def anneal(
    X,
    C,
    sigmas,
    assignment: str = "entmax15",
    *,
    sample_weight=None,
    max_iter: int = 1000,
    tol: float = 1e-20,
    random_state: int | np.random.Generator | str | None = "warn",
    perturbation: float = 1e-3,  # PERTURBATION, written out for the docs
    stop_when_hard: bool = False,
    backend: str = "auto",
    metric: str = "euclidean",
) -> AnnealPath:
    """Warm-started soft Lloyd steps to convergence down a temperature sequence.

    Coincident centers are spares, split off an active center along its
    principal axis once the temperature falls below its critical
    temperature, every unstable center at once (the textbook deterministic
    annealing; :class:`RBFKMeans` gives its spares to the unstable centers
    that gain most first).

    Parameters
    ----------
    X : array-like, scipy.sparse matrix or dask.array.Array of shape (n, d)
        Data. A dask array (all features in one chunk) is annealed on the
        current dask scheduler, its chunks persisted for the run
        (:mod:`fastrbfkm.dask`).
    C : array-like of shape (k, d)
        Initial centers (for instance all at the mean, above the critical
        temperature; see :func:`critical_temperature`). Its old name ``C0``
        still works, with a ``FutureWarning``, until 0.3.
    sigmas : array-like of shape (T,)
        Strictly decreasing temperatures > 0.
    assignment : {"entmax15", "softmax"}, default="entmax15"
        The soft assignment.
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights with a positive sum.
    max_iter : int, default=1000
        Most soft Lloyd steps at one temperature.
    tol : float, default=1e-20
        Convergence when the squared Frobenius shift of the centers in one
        step is at most ``tol`` times the mean feature variance (the
        convention of scikit-learn's KMeans): the default makes the recorded
        centers fixed points to about ``1e-10`` of the data's spread (in
        float32, to about ``1e-5``, the dtype's resolution).
    random_state : int, Generator or None
        Seed of the symmetry-breaking perturbation; None draws a fresh one,
        as everywhere else in the library. Not given, it is 0 (the results of
        0.1) with a ``FutureWarning``: from 0.3 the default is None.
    perturbation : float, default=1e-3
        Size of the nudge that splits a group of coincident centers, relative
        to the group's spread along its principal axis.
    stop_when_hard : bool, default=False
        Stop after the first temperature at which every responsibility row is
        hard (exactly for entmax15, within 1e-12 for softmax).
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where the passes over X run: ``"cuda"`` keeps X on an NVIDIA GPU
        (copied once; CUDA arrays are used in place) and brings back only
        the per-step statistics; ``"auto"`` does so for CUDA arrays and for
        large enough data when a GPU is available, else uses the CPU.
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: on the unit sphere (rows and ``C`` at unit length;
        every step's weighted means scaled back to it; split temperatures
        from :func:`critical_temperature` with the same metric).

    Returns
    -------
    path : AnnealPath
        The converged centers and their statistics at every temperature.
    """
    mode = check_soft_assignment(assignment)
    rows = open_rows(X, sample_weight, backend, centers=C, fit=True, metric=metric)
    C = rows.check_centers(C)
    C = rows.metric.centers(C)
    sig = as_float_array(sigmas, "sigmas", ndim=1, dtype=np.dtype(np.float64))
    if sig.min() <= 0 or np.any(np.diff(sig) >= 0):
        raise ValueError("sigmas must be positive and strictly decreasing.")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer; got {max_iter!r}.")
    tol = check_real(tol, "tol")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be finite and >= 0; got {tol!r}.")
    perturbation = check_real(perturbation, "perturbation")
    if not (np.isfinite(perturbation) and perturbation >= 0):
        raise ValueError(f"perturbation must be finite and >= 0; got {perturbation!r}.")
    if isinstance(random_state, str) and random_state == "warn":
        warn(
            "anneal(): the default random_state changes from 0 to None (a fresh seed, as "
            "everywhere else in fastrbfkm) in 0.3; pass random_state=0 to keep these "
            "results, or None for the new behaviour, and silence this warning."
        )
        random_state = 0
    rng = check_generator(random_state)
    scale2 = float(rows.moments().variance.sum()) / rows.d
    plan = AnnealPlan.given(sig, max_iter, perturbation, stop_when_hard)
    return run_anneal(rows, C, mode, AnnealSettings(plan, tol * scale2, scale2), rng)
