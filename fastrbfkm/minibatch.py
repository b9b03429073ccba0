"""MiniBatchRBFKMeans: soft and annealed K-Means on mini-batches.

A gradient step on the centers with the per-center rate ``1 / (2 N_k)`` is
Lloyd's update; with running counts it becomes an online one. Each batch B
runs one fused pass (:meth:`fastrbfkm._rows.Rows.stats`) for its weighted
statistics at the current temperature, ``n_k = sum_B w_i r_ik`` and ``s_k =
sum_B w_i r_ik x_i``, then

    N_k <- N_k + n_k,        c_k <- c_k + (s_k - n_k c_k) / N_k,

so that c_k is the running mean of the rows' shares of it: one full batch
from ``N = 0`` is exactly a Lloyd step (at ``sigma = 0``) or a soft Lloyd
step. The temperature follows a schedule over batches, as the full fit's
annealing (:mod:`fastrbfkm.annealing`) does over temperatures: every center
starts on the mean of ``init_size`` probe rows, one active and the others
spares; each temperature lasts ``anneal_batches`` batches, over which the
counts are a moving average (held while a fresh split still opens up); at
its end, centers that sit on one another merge, and spares split off the
centers that the probe rows show unstable at the next temperature
(temperatures at which none would are skipped). Once every center is active
and a batch is nearly hard, the centers are polished on the probe rows
(Lloyd iterations, from them and from a greedy k-means++ start of the probe
rows, whichever ends lower, then swap moves) and the fit goes on with hard mini-batch
K-Means and scikit-learn's stopping rules (``max_no_improvement``, ``tol``);
``fit`` ends with one Lloyd step over every row (``full_step``).
"""

from __future__ import annotations

import math
import numbers
from typing import ClassVar

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data

from . import _kernels as K
from ._axes import largest_variance
from ._base import BaseRBFKMeans
from ._memory import explains_memory
from ._rows import ArrayRows, HardPasses, Rows, hard_passes, in_memory, soft_passes
from ._spares import Spares
from ._threads import one_blas_thread
from ._tunables import (
    COLD_GAP,
    MAX_HOLDS,
    MERGE_RADIUS,
    OPENING,
    POLISH_ITER,
    POLISH_TOL,
    SPLIT_MARGIN,
    SPLIT_STEP,
)
from ._validation import check_assignment
from .annealing import AnnealPlan, candidates, critical_from_variance, is_hard
from .lloyd import improve_by_swaps, run_lloyd

__all__ = ["MiniBatchRBFKMeans", "online_update"]


def online_update(C: np.ndarray, counts: np.ndarray, N: np.ndarray, S: np.ndarray) -> None:
    """The online Lloyd update in place: ``counts += N`` and, for every center
    with a positive count, ``C += (S - N C) / counts`` (float64 ``C``)."""
    counts += N
    live = counts > 0
    C[live] += (S[live] - N[live, None] * C[live]) / counts[live, None]


class MiniBatchRBFKMeans(BaseRBFKMeans):
    """K-Means as the zero-temperature limit of an RBF network, on mini-batches.

    The online form of :class:`RBFKMeans`: each batch runs one fused soft
    pass and moves the centers with per-center rates from running counts
    (the online Lloyd update), annealing the temperature over batches. With
    ``assignment="hard"`` it is scikit-learn's ``MiniBatchKMeans`` update.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of centers k.
    assignment : {"entmax15", "softmax", "hard"}, default="entmax15"
        How distances become responsibilities.
    sigma : float > 0 or "auto", default="auto"
        ``"auto"`` anneals over the batches (see the module's docstring):
        from the critical temperature of ``init_size`` rows (``2
        lambda_max``, softmax; ``2 sqrt(k) lambda_max``, entmax15), with
        every center on their mean, down by ``cooling`` every
        ``anneal_batches`` batches until every center is active and a batch
        is nearly hard; then hard mini-batch K-Means goes on. A float keeps
        that temperature for every batch, from ``init``. Ignored when
        ``assignment="hard"``.
    cooling : float in (0, 1), default=0.8
        Factor between temperatures.
    anneal_batches : int, default=10
        Batches at each temperature (more while a fresh split still opens),
        over which the counts are a moving average.
    init : {"k-means++", "random"}, callable or array of shape (k, d), default="k-means++"
        Initial centers when not annealing, from ``init_size`` rows (as
        :class:`RBFKMeans`'s ``init``); for ``assignment="hard"``, a string
        ``init`` is then polished on those rows (Lloyd iterations and swap
        moves).
    batch_size : int, default=1024
        Rows per batch, drawn uniformly with replacement (a dask array: one
        chunk a batch).
    max_iter : int, default=100
        Most passes over the data's size (``max_iter * n / batch_size``
        batches in all), as scikit-learn's ``max_iter``.
    max_no_improvement : int or None, default=10
        After the annealing, stop after this many batches without a new low
        of the smoothed batch inertia (scikit-learn's rule; the free energy
        at a fixed ``sigma``), once it averages over ``n / (2 batch_size)``
        batches; None never.
    tol : float, default=0.0
        After the annealing, stop when a batch moves the centers by at most
        ``tol`` times the mean feature variance (squared); 0 never.
    init_size : int or None, default=None
        Rows drawn for the start (the critical temperature and mean, or
        ``init``); None is ``3 * batch_size`` (at least ``3 * n_clusters``).
    reassignment_ratio : float >= 0, default=0.01
        After the annealing (from the first batch for ``assignment="hard"``
        or a float ``sigma``), as in scikit-learn's ``MiniBatchKMeans``:
        whenever a center has taken no weight, or ``10 * n_clusters`` rows
        have passed since the last look, centers whose count is below this
        fraction of the largest count move to rows of the current batch
        (drawn in proportion to their weights; at most half the batch), and
        their counts become the smallest of the others'. Higher values
        rescue more nearly empty clusters and converge more slowly; 0 never
        reassigns.
    full_step : bool, default=True
        ``fit`` ends with one Lloyd step (soft at a fixed ``sigma``) over
        every row, which takes the batches' noise out of the centers: one
        more pass over the data besides the one for ``labels_``.
    random_state : int, RandomState instance or None, default=None
        Seeds the batches and the start.
    verbose : int, default=0
        A line per temperature, and the hard phase's end.
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where the data's passes run, as in :class:`RBFKMeans` (the batches
        themselves are gathered to the host).
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: spherical mini-batch K-Means, as in
        :class:`RBFKMeans` (unit rows, centers scaled back to the unit
        sphere after every update, cosine distances in ``inertia_``,
        ``score`` and ``transform``).

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Final centers, in X's float dtype.
    labels_ : ndarray of shape (n_samples,)
        Nearest center of every training row (``fit``; one more pass), or of
        every row of the last batch at the updated centers (``partial_fit``,
        as scikit-learn's ``MiniBatchKMeans``).
    inertia_ : float
        Weighted inertia of the training data (``fit``), or of the last
        batch at the centers it started from (``partial_fit``).
    counts_ : ndarray of shape (n_clusters,)
        Weighted rows each center has taken since its temperature began.
    sigma_ : float
        The current temperature (0 once hard). While the annealing runs
        (``sigma="auto"``, ``sigma_ > 0``), ``predict``, ``predict_proba``,
        ``transform`` and ``score`` raise a ``ConvergenceWarning``: the
        centers are not K-Means centers yet.
    soft_sigma_ : float or None
        The temperature at which :meth:`predict_proba` reads soft
        memberships, as :class:`RBFKMeans`'s: ``sigma_`` while it is
        positive, then twice the pooled variance per feature of the
        clusters on the training data (``fit``) or on the last batch
        (``partial_fit``); None for ``assignment="hard"``.
    sigma_critical_ : float or None
        The temperature the annealing started at.
    n_steps_ : int
        Batches processed.
    n_iter_ : int
        Passes over the data's size (``ceil(n_steps_ * batch_size / n)``; fit).
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbfkm import MiniBatchRBFKMeans
    >>> X = np.random.default_rng(0).normal(size=(5000, 2))
    >>> km = MiniBatchRBFKMeans(3, batch_size=256, random_state=0).fit(X)
    >>> km.cluster_centers_.shape
    (3, 2)
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseRBFKMeans._shared_constraints,
        "anneal_batches": [Interval(numbers.Integral, 1, None, closed="left")],
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_no_improvement": [None, Interval(numbers.Integral, 1, None, closed="left")],
        "init_size": [None, Interval(numbers.Integral, 1, None, closed="left")],
        "reassignment_ratio": [Interval(numbers.Real, 0, None, closed="left")],
        "full_step": ["boolean"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        assignment="entmax15",
        sigma="auto",
        cooling=0.8,
        anneal_batches=10,
        init="k-means++",
        batch_size=1024,
        max_iter=100,
        max_no_improvement=10,
        tol=0.0,
        init_size=None,
        reassignment_ratio=0.01,
        full_step=True,
        random_state=None,
        verbose=0,
        backend="auto",
        metric="euclidean",
    ):
        self.n_clusters = n_clusters
        self.assignment = assignment
        self.sigma = sigma
        self.cooling = cooling
        self.anneal_batches = anneal_batches
        self.init = init
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.max_no_improvement = max_no_improvement
        self.tol = tol
        self.init_size = init_size
        self.reassignment_ratio = reassignment_ratio
        self.full_step = full_step
        self.random_state = random_state
        self.verbose = verbose
        self.backend = backend
        self.metric = metric

    def __setstate__(self, state):
        """Unpickle; a model pickled before the spare centers were one
        object (``_active``, ``_parent``, ``_pairs``) gets them as one."""
        if "_active" in state:
            state = dict(state)
            pairs = state.pop("_pairs", None)
            state["_spares"] = Spares(state.pop("_active"), state.pop("_parent"), pairs)
        super().__setstate__(state)

    # ------------------------------------------------------------------- fit

    @one_blas_thread
    @explains_memory
    def fit(self, X, y=None, sample_weight=None):
        """Fit on mini-batches drawn from X.

        Parameters
        ----------
        X : array-like, scipy.sparse, numpy.memmap or dask.array.Array, shape (n, n_features)
            Training data (a memory-mapped file is read a batch at a time).
        y : Ignored
            Not used, present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights with a positive sum; None means all ones.

        Returns
        -------
        self : MiniBatchRBFKMeans
            The fitted estimator.
        """
        rows = self._open_fit_rows(X, sample_weight)
        rng = np.random.default_rng(check_random_state(self.random_state).randint(2**31))
        self._start(rows, rng)
        tol = 0.0
        if self.tol > 0:
            tol = float(rows.moments(weighted=False).variance.sum()) / rows.d * self.tol
        batch = int(self.batch_size)
        steps = int(self.max_iter) * math.ceil(rows.n / batch)
        # scikit-learn's smoothed batch inertia (the free energy at a fixed
        # sigma), after the annealing; it is compared only once it averages
        # over its window (1 / alpha batches, the mean of the batches so far
        # until then), not from one lucky batch
        alpha = min(1.0, 2.0 * batch / (rows.n + 1))
        window = math.ceil(1.0 / alpha)
        ewa, best, stale, hard = 0.0, np.inf, 0, 0
        for _ in range(steps):
            Xb, wb = rows.batch(batch, rng)
            summary, shift = self._step(in_memory(Xb, wb, rows.metric))
            if self._annealing:
                continue
            hard += 1
            mean = summary[K.OBJECTIVE] / (float(wb.sum()) if wb.size else Xb.shape[0])
            ewa += (mean - ewa) * max(alpha, 1.0 / hard)
            if tol > 0 and shift <= tol:
                break
            if hard < window:
                continue
            if ewa < best:
                best, stale = ewa, 0
            else:
                stale += 1
                if self.max_no_improvement is not None and stale >= self.max_no_improvement:
                    break
        if self.verbose:
            print(f"MiniBatchRBFKMeans: stopped after {self.n_steps_} batches")
        if self.full_step:
            # the batches' noise out of the centers: one step over every row
            mode = check_assignment(self.assignment) if self.sigma_ > 0 else K.HARD
            N, S, _ = rows.stats(self._centers_like(rows), self.sigma_, mode)
            live = N > 0
            self._C[live] = S[live] / N[live, None]
            self._C = rows.metric.centers(self._C)
            self.cluster_centers_ = self._C.astype(rows.dtype)
        C = self._centers_like(rows)
        labels, inertia, _ = rows.assign(C)
        validate_data(self, X, reset=True, skip_check_array=True)
        self.labels_ = labels
        self.inertia_ = rows.metric.inertia(float(inertia))
        self.soft_sigma_ = self._soft_sigma(self.inertia_, rows.weight, rows.d)
        self.n_iter_ = math.ceil(self.n_steps_ * batch / rows.n)
        self._warn_if_soft()  # max_iter ran out before the annealing's end
        return self

    @one_blas_thread
    @explains_memory
    def partial_fit(self, X, y=None, sample_weight=None):
        """Update the centers with one batch (the first call also starts them).

        Parameters
        ----------
        X : array-like, scipy.sparse, dask.array.Array or CUDA array, shape (n, n_features)
            The batch; later calls must have the first one's features.
        y : Ignored
            Not used, present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; None means all ones.

        Returns
        -------
        self : MiniBatchRBFKMeans
            The updated estimator.
        """
        first = not hasattr(self, "cluster_centers_")
        if first:
            rows = self._open_fit_rows(X, sample_weight)
            seed = check_random_state(self.random_state).randint(2**31)
            self._start(rows, np.random.default_rng(seed))
            validate_data(self, X, reset=True, skip_check_array=True)
        else:
            rows = self._new_rows(X, sample_weight)
        self.inertia_ = rows.metric.inertia(float(self._step(rows)[0][K.INERTIA]))
        self.soft_sigma_ = self._soft_sigma(self.inertia_, rows.weight, rows.d)
        self.labels_ = rows.labels(self._centers_like(rows))  # as MiniBatchKMeans keeps them
        return self

    # ------------------------------------------------------------ internals

    def _still_soft(self) -> str | None:
        """While the annealing over batches runs, why the centers are not
        K-Means centers yet (a warning when the model is used then)."""
        if not getattr(self, "_annealing", False):
            return None
        return (
            f"MiniBatchRBFKMeans is still annealing after {self.n_steps_} batches: sigma_ = "
            f"{self.sigma_:.3g} > 0 with {self._spares.n_active} of {self._spares.active.size} "
            "centers apart, so cluster_centers_ are a soft solution at that temperature, not "
            "K-Means centers yet. Give it more batches (the annealing ends once every center "
            "is active and a batch is nearly hard; fewer are needed with a lower "
            "anneal_batches or cooling), or use assignment='hard' for plain mini-batch K-Means."
        )

    def _start(self, rows: Rows, rng: np.random.Generator) -> None:
        """Centers, temperature and counts from ``init_size`` rows of the data."""
        k = int(self.n_clusters)
        size = self.init_size or max(3 * int(self.batch_size), 3 * k)
        Xs, ws = rows.batch(min(int(size), max(rows.n, k)), rng)
        probe = in_memory(Xs, ws, rows.metric)
        mode = check_assignment(self.assignment)
        self._rng = rng
        self._probe = probe
        self._probe_passes = soft_passes(probe)  # the splits' soft passes over it
        self._probe_hard = hard_passes(probe, k)  # its Lloyd runs' (the polish)
        self.sigma_critical_ = None
        self._annealing = mode != K.HARD and self.sigma == "auto"
        if self._annealing:
            # every center on the mean: one active, the others its spares
            moments = probe.moments()
            sigma = float(critical_from_variance(largest_variance(probe, moments), k, mode))
            self.sigma_critical_ = sigma
            center = probe.metric.mean(moments.mean, moments.covariance)
            C = np.tile(center, (k, 1))
        else:
            init = self.init
            if callable(init):
                seed = int(rng.integers(2**31))
                given = init(probe.as_given(), k, np.random.RandomState(seed))
                init = self._init_array(given, rows)
            C = probe.initial_centers(k, init, rng)
            sigma = 0.0 if mode == K.HARD else float(self.sigma)
            if mode == K.HARD and isinstance(init, str):
                C = self._polish(probe, C, passes=self._probe_hard)
        self._spares = Spares.of_copies(C) if self._annealing else Spares.none(k)
        self._C = rows.metric.centers(np.array(C, dtype=np.float64))
        self.cluster_centers_ = self._C.astype(rows.dtype)
        self.counts_ = np.zeros(k)
        self.sigma_ = sigma
        self.soft_sigma_ = None
        self.n_steps_ = 0
        self._at_temperature = 0
        self._since_reassignment = 0
        self._holds = 0
        self._gaps = np.empty(0)
        if self._annealing:
            self._split(sigma, mode)

    def _step(self, rows: Rows) -> tuple[np.ndarray, float]:
        """One batch: its fused pass at the current temperature on the active
        centers, the online update, the schedule. Returns the batch's summary
        (:func:`fastrbfkm._kernels.block_stats`) at the centers it started
        from and the centers' squared shift."""
        mode = check_assignment(self.assignment) if self.sigma_ > 0 else K.HARD
        active = self._spares.active
        A = np.ascontiguousarray(self._C[active], dtype=rows.dtype)
        N, S, summary = rows.stats(A, self.sigma_, mode)
        before = self._C.copy()
        counts = self.counts_[active]
        if self._annealing:
            # a moving average over about anneal_batches batches: the soft
            # solution it tracks moves with the temperature
            counts *= 1.0 - 1.0 / int(self.anneal_batches)
        C = self._C[active]
        online_update(C, counts, N, S)
        self._C[active] = C
        self.counts_[active] = counts
        self._spares.sync(self._C)
        self._C = rows.metric.centers(self._C, before)  # the running means projected
        if not self._annealing and self.reassignment_ratio > 0:
            self._reassign(rows)
        self.cluster_centers_ = self._C.astype(rows.dtype)
        self.n_steps_ += 1
        if self._annealing:
            self._at_temperature += 1
            if self._at_temperature >= int(self.anneal_batches):
                self._next_temperature(summary, mode)
        return summary, float(((self._C - before) ** 2).sum())

    def _reassign(self, rows: Rows) -> None:
        """scikit-learn's reassignment of nearly empty clusters to rows of
        the batch (see ``reassignment_ratio``)."""
        counts = self.counts_
        self._since_reassignment += rows.n
        if not ((counts <= 0).any() or self._since_reassignment >= 10 * counts.size):
            return
        self._since_reassignment = 0
        low = counts < float(self.reassignment_ratio) * counts.max()
        most = rows.n // 2
        if low.sum() > most:  # the lowest counts first, at most half the batch
            low[np.argsort(counts, kind="stable")[most:]] = False
        if not low.any():
            return
        new = rows.draw(int(low.sum()), int(self._rng.integers(2**31)))
        moved = np.flatnonzero(low)[: new.shape[0]]
        self._C[moved] = new[: moved.size]
        kept = np.ones(counts.size, dtype=bool)
        kept[moved] = False
        counts[moved] = counts[kept].min() if kept.any() else 0.0

    def _next_temperature(self, summary: np.ndarray, mode: int) -> None:
        """The end of a temperature's batches, as the full fit ends one:
        while the last splits still open up, the temperature is held, and
        centers on top of one another merge. The annealing ends once every center is active
        and the batch was (nearly) hard, or the temperature is the float64
        resolution below the first; else the next temperature, skipping
        those at which no spare would split, and the splits there."""
        spares = self._spares
        self._at_temperature = 0
        if self._opening() and self._holds < MAX_HOLDS:
            self._holds += 1
            return
        self._gaps = np.empty(0)
        spares.settle(self._C, MERGE_RADIUS * np.sqrt(self.sigma_))
        cold = spares.all_active and self._cold(summary, mode)
        if cold or self._plan.schedule.ends_after(self.sigma_):
            self._end_annealing()
        else:
            self._split(self._plan.schedule.next(self.sigma_), mode)
        if self.verbose:
            print(
                f"MiniBatchRBFKMeans: batch {self.n_steps_}, sigma {self.sigma_:.4g}, "
                f"{spares.n_active} active centers"
            )

    @staticmethod
    def _cold(summary: np.ndarray, mode: int) -> bool:
        """Whether the batch was hard, or nearly: ``J - F <= COLD_GAP J``."""
        gap = summary[K.INERTIA] - summary[K.OBJECTIVE]
        return is_hard(summary, mode) or gap <= COLD_GAP * summary[K.INERTIA]

    @property
    def _plan(self) -> AnnealPlan:
        """The annealing over batches, from the start's critical temperature
        and the current ``cooling`` (read at every temperature, as
        ``set_params`` between ``partial_fit`` calls may change it)."""
        return AnnealPlan.for_batches(self.sigma_critical_, self.cooling, SPLIT_STEP)

    def _split(self, sigma: float, mode: int) -> None:
        """Move to temperature ``sigma`` (or, while the spares would not
        split there, down the schedule to the first at which one does) and
        split the spares off the centers unstable there, as the full fit does
        (:meth:`fastrbfkm._spares.Spares.split_unstable`), seen on the probe
        rows."""
        spares = self._spares
        if not spares.all_active:
            plan = self._plan
            found = candidates(
                self._probe,
                self._centers_in_dtype(),
                spares.active,
                self.sigma_,
                mode,
                self._probe_passes,
            )
            top = float(found.critical.max(initial=0.0)) / (1.0 + SPLIT_MARGIN)
            if 0 < top <= sigma:  # none splits at sigma: the first temperature below top
                sigma = plan.schedule.first_below(sigma, top)
            pairs = spares.split_unstable(
                self._C, found, sigma, self._rng, plan.perturbation, gain_ratio=plan.gain_ratio
            )
            self._C = self._probe.metric.centers(self._C)
            self.counts_[pairs.ravel()] = 0.0
            self._gaps = self._pair_gaps()
        self._holds = 0
        self.sigma_ = sigma

    @staticmethod
    def _polish(
        probe: ArrayRows,
        C: np.ndarray,
        rival: np.ndarray | None = None,
        passes: HardPasses | None = None,
    ) -> np.ndarray:
        """Lloyd iterations and swap moves on the probe rows (float64
        result); with a ``rival`` start, the swaps go on from whichever of
        the two has the lower inertia after Lloyd. ``passes``: the probe's
        hard passes, carried from one polish to the next (None: new ones)."""
        if passes is None:
            passes = hard_passes(probe, C.shape[0])
        tol = POLISH_TOL * float(probe.moments(weighted=False).variance.mean())
        C = np.ascontiguousarray(C, dtype=probe.dtype)
        start = run_lloyd(probe, C, POLISH_ITER, tol, passes=passes)
        if rival is not None:
            other = run_lloyd(probe, rival, POLISH_ITER, tol, passes=passes)
            start = other if other.inertia < start.inertia else start
        polished = improve_by_swaps(probe, start, POLISH_ITER, tol, passes=passes)
        return polished.centers.astype(np.float64)

    def _centers_in_dtype(self) -> np.ndarray:
        return self._C.astype(self._probe.dtype)

    def _pair_gaps(self) -> np.ndarray:
        C, pairs = self._C, self._spares.pairs
        return np.linalg.norm(C[pairs[:, 0]] - C[pairs[:, 1]], axis=1)

    def _opening(self) -> bool:
        """Whether a pair split at this temperature grew apart by more than
        ``OPENING`` over the last ``anneal_batches`` batches (as the full fit
        converges at a temperature until its fresh splits stop opening)."""
        if not self._spares.pairs.size:
            return False
        gaps = self._pair_gaps()
        opening = bool((gaps > (1.0 + OPENING) * self._gaps).any())
        self._gaps = gaps
        return opening

    def _end_annealing(self) -> None:
        """Hard mini-batch K-Means from here: spares left (fewer distinct
        groups than centers) split off the heaviest centers; the centers are
        polished on the probe rows as :class:`RBFKMeans`'s ``refine`` does
        (Lloyd iterations, from them and from a greedy k-means++ start of
        the probe rows, whichever ends lower, then swap moves, which move a
        center from where it helps least to a cell that a split helps
        most); counts restart."""
        spares = self._spares
        if not spares.all_active:
            found = candidates(self._probe, self._centers_in_dtype(), spares.active, 0.0, K.HARD)
            # every spare left goes out now, to the heaviest cells
            perturbation = self._plan.perturbation
            spares.split_unstable(self._C, found, 0.0, self._rng, perturbation, gain_ratio=0.0)
        probe = self._probe
        rival = probe.initial_centers(self._C.shape[0], "k-means++", self._rng)
        rival = probe.metric.centers(rival)
        self._C = self._polish(probe, self._centers_in_dtype(), rival, self._probe_hard)
        self._annealing = False
        self.sigma_ = 0.0
        self.counts_[:] = 0.0
