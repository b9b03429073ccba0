"""RBFKMeans: hard, soft and annealed K-Means as a scikit-learn estimator."""

from __future__ import annotations

import numbers
import time
import warnings
from typing import ClassVar

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import validate_data

from . import _kernels as K
from ._axes import largest_variance
from ._base import BaseRBFKMeans
from ._memory import explains_memory
from ._rows import HardPasses, HostRows, annealing_sample, hard_passes
from ._threads import one_blas_thread
from ._tunables import (
    EVERY_ROW_SWAP_ROUNDS,
    MANY_CLUSTERS,
    POLISH_TOL_FACTOR,
)
from ._validation import check_assignment
from .annealing import (
    AnnealPlan,
    AnnealSettings,
    auto_anneal_size,
    critical_from_variance,
    run_anneal,
)
from .lloyd import LloydResult, improve_by_swaps, improve_by_transfers, run_lloyd
from .phases import DEFAULT_COOLING as PHASE_COOLING
from .phases import DEFAULT_MAX_CLUSTERS, diagram_of_rows
from .phases import DEFAULT_TOL as PHASE_TOL


class RBFKMeans(BaseRBFKMeans):
    """K-Means as the zero-temperature limit of a normalized RBF network.

    With ``assignment="hard"`` this is Lloyd's K-Means. With ``"softmax"`` or
    ``"entmax15"`` the centers are soft Lloyd fixed points at a temperature
    ``sigma`` (in units of squared distance): one temperature, or
    (``sigma="auto"``, the default) deterministic annealing from just above
    the critical temperature, where every center sits on the mean, down to
    where every point's responsibilities are hard; ``refine`` then finishes
    with hard Lloyd iterations at a true K-Means fixed point.

    Parameters
    ----------
    n_clusters : int or "auto", default=8
        Number of centers k. "auto" reads it off the phase transitions of a
        softmax annealing with up to ``max_clusters`` centers (the count
        that lasts longest in log sigma: :func:`fastrbfkm.phase_diagram`,
        over the annealing sample of ``anneal_size`` rows), then fits that
        many; ``n_clusters_`` is the count and ``phase_diagram_`` the record.
    max_clusters : int >= 2 or None, default=None
        Most clusters ``n_clusters="auto"`` considers; None is 10. Give about
        twice the count you expect: counts near ``max_clusters`` are cut
        short by the end of the annealing. Ignored for an integer
        ``n_clusters``.
    assignment : {"entmax15", "softmax", "hard"}, default="entmax15"
        How distances become responsibilities. Entmax-1.5 is sparse and
        exactly hard at a finite temperature, so annealing ends by itself.
    sigma : float > 0 or "auto", default="auto"
        ``"auto"`` anneals from just above the critical temperature
        (``2 lambda_max`` for softmax, ``2 sqrt(k) lambda_max`` for entmax15,
        ``lambda_max`` the largest eigenvalue of the weighted covariance),
        starting with every center on the weighted mean; ``init`` is then not
        used. A float is one temperature, started from ``init`` (or the first
        of an annealing down to ``sigma_min`` when that is given). Ignored
        when ``assignment="hard"``.
    sigma_min : float > 0 or None, default=None
        Last temperature. None cools until every row is hard (exactly for
        entmax15, within 1e-12 off the winner for softmax), or until sigma is
        the dtype's resolution below the first temperature.
    cooling : float in (0, 1), default=0.8
        Geometric cooling factor between temperatures.
    init : {"k-means++", "random"}, callable or array of shape (k, d), default="k-means++"
        Initial centers for hard K-Means and for a fixed ``sigma``.
        ``"k-means++"`` is greedy k-means++ (``2 + log k`` candidates a
        seed, the one lowering the potential most kept); with more than
        ``max(10000, 10 * n_clusters)`` rows in memory (or on a GPU), on a
        seeded random sample of that many rows drawn in proportion to
        ``sample_weight``, followed by two k-means|| rounds over every row
        (about ``n_clusters`` more candidates a round, drawn in proportion
        to their squared distance) and greedy weighted k-means++ on all the
        candidates: a few passes' cost over X instead of
        ``(2 + log k) n_clusters``, at the same final inertia. A
        callable is called as scikit-learn's ``init(X, n_clusters,
        random_state)`` once per run (``X`` the validated numpy data, or the
        data as given for other kinds; ``random_state`` a seeded
        ``numpy.random.RandomState``) and returns the ``(k, d)`` centers.
    n_init : int or "auto", default=1
        Runs with different seeds; the one with the lowest final inertia is
        kept. One is enough for annealing, whose solution barely depends on
        the seed. "auto" is scikit-learn's: 10 runs for ``init="random"`` or
        a callable, one otherwise.
    max_iter : int, default=300
        Most hard Lloyd iterations, and most soft steps at a temperature
        whose solution is kept (``refine=False``, or a single ``sigma``).
    anneal_steps : int, default=3
        Most soft steps at each temperature at which centers are still
        splitting, in an annealing that ``refine`` finishes. There the warm
        solutions only guide where the centers split, so the steps need not
        converge: a few per temperature find optima as good as converging
        at each, in a fraction of the passes over the data. Once every
        center is active the annealing goes on down to hard
        responsibilities with up to 10 steps a temperature, and the hard
        iterations find the fixed point. Raise it to anneal closer to
        equilibrium.
    anneal_size : int, "auto" or None, default="auto"
        Rows the annealing ahead of ``refine`` works on, held in memory on
        the host: with more rows than this, a seeded random sample of this
        many (drawn with probability in proportion to ``sample_weight``, each
        standing for an equal share of the total weight) is annealed and
        polished (Lloyd, swap moves, single-row transfers), and Lloyd and the
        swap moves on every row finish; with fewer, every row with its own
        weight (a dask array, a streamed file or GPU data are then copied to
        memory for it). "auto" is 20000 rows up to 128 clusters; beyond, as
        many as keep a soft pass's rows x clusters at ``20000 * 128``, or 32
        rows a cluster where that is more (with many clusters
        the polish on the sample and then on every row costs less than
        annealing every row, for a few tenths of a percent of inertia).
        None anneals every row where it lives; the single-row transfers,
        which visit the rows one at a time, then run only on data in memory
        (numpy arrays and scipy.sparse matrices).
    train_size : int or None, default=None
        Rows the fit learns the centers from, held in memory on the host, in
        the spirit of faiss's ``max_points_per_centroid`` and
        ``MiniBatchKMeans``'s ``init_size``: with more rows than this, a
        seeded random sample of this many (drawn as for ``anneal_size``, in
        proportion to ``sample_weight``, each standing for an equal share of
        the total weight) is all that the seeding, the annealing, Lloyd and
        the swap moves see, and one assignment pass over every row then
        gives ``labels_`` and ``inertia_``. ``anneal_size`` then counts rows
        of that sample, and the sample must have at least ``n_clusters``
        rows. None (the default) learns from every row. A sample of a few
        tens of rows a center trades a little inertia for a fit that costs
        a few passes over the data; the performance page of the
        documentation draws the trade.
    tol : float, default=1e-4
        Convergence when the squared Frobenius shift of the centers in one
        iteration is at most ``tol`` times the mean feature variance
        (scikit-learn's convention; ``tol=0`` for hard iterations means: until
        the labels stop changing).
    refine : bool, default=True
        Finish the soft phase with hard Lloyd iterations, swap moves and
        single-row transfers (see ``docs/annealing.md``); ``sigma_`` is then 0,
        and ``predict_proba`` gives the final centers' soft memberships at
        ``soft_sigma_``. An annealing from the mean (``sigma="auto"``) is
        polished from its own centers or from a greedy k-means++ start,
        whichever is lower after Lloyd's algorithm on the annealed rows
        (``start_`` says which), so that the fit never ends above what
        k-means++ and Lloyd find on those rows. Set it to False to keep the
        soft solution at the last temperature.
    record_path : bool, default=False
        Keep the annealing path in ``path_``.
    random_state : int, RandomState instance or None, default=None
        Seeds the initialization and the symmetry breaking.
    verbose : int, default=0
        Progress over temperatures (a tqdm bar when tqdm is installed, plain
        lines otherwise), and every hard Lloyd iteration's inertia as
        scikit-learn's ``KMeans`` prints it.
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where the passes over the data run. ``"cuda"``: on an NVIDIA GPU
        (``pip install "fastrbfkm[cuda]"``), X copied to the device once (a
        CUDA array, such as a CuPy array or a PyTorch CUDA tensor, is used
        in place) and only k- and k x d-sized statistics coming back per
        iteration; a RuntimeError says what is missing when no GPU is
        usable. ``"auto"``: the GPU for CUDA arrays, and for host data when
        a GPU is available and ``n * d * n_clusters`` is large enough to pay
        for the copy; else the CPU. The fitted attributes are numpy arrays
        either way; ``predict`` and ``transform`` return device arrays for
        CUDA input.
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: spherical K-Means. Rows are used at unit length (a
        copy; an all-zero row is refused) and the centers stay on the unit
        sphere (each update is the weighted mean scaled to unit length);
        distances are ``D = ||x - c||^2 = 2 - 2 x.c`` between unit vectors,
        so ``sigma`` keeps its units and soft assignments are a mixture of
        von Mises-Fisher kernels of concentration ``2 / sigma``. The
        annealing's critical temperatures are the sphere's (see the user
        guide's spherical page). ``inertia_``, ``score`` and ``transform``
        then measure cosine distances ``1 - x.c`` (half of D). The CPU
        only, for now (no CUDA arrays).

    Attributes
    ----------
    n_clusters_ : int
        Number of centers fitted: ``n_clusters``, or the count
        ``n_clusters="auto"`` chose.
    phase_diagram_ : PhaseDiagram or None
        With ``n_clusters="auto"``, the phase diagram the count was read off
        (:class:`fastrbfkm.PhaseDiagram`); None otherwise.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        Final centers, in X's float dtype.
    labels_ : ndarray or dask array of shape (n_samples,)
        Index of every training point's nearest center. After a fit on a
        dask array, a lazy dask array over X's chunks (computing it runs the
        nearest-center kernel on every chunk again; nothing of X is kept).
    inertia_ : float
        Weighted sum of squared distances to the nearest center
        (``metric="cosine"``: of cosine distances ``1 - x.c``).
    n_iter_ : int
        Iterations of the kept run: soft steps over all temperatures plus
        hard Lloyd iterations.
    sigma_ : float
        Final temperature: 0 after hard iterations, else the last soft one.
    start_ : {"annealing", "k-means++"} or None
        Which start the polish of an annealed fit (``sigma="auto"`` with
        ``refine``) went on from: the annealed centers, or the greedy
        k-means++ centers it carries alongside, whichever was lower after
        Lloyd's algorithm on the annealed rows (see ``refine``). None for
        other fits.
    soft_sigma_ : float or None
        The temperature at which :meth:`predict_proba` reads soft
        memberships: ``sigma_`` when it is positive; after hard iterations
        (``sigma_ = 0``), twice the clusters' pooled variance per feature,
        ``2 * inertia_ / (total weight * n_features)``, at which softmax
        responsibilities are the posterior probabilities of an equal-weight
        mixture of isotropic Gaussians of that variance on the final
        centers (entmax15's are their sparse counterpart: zero for centers
        clearly farther than the nearest). None for ``assignment="hard"``
        and when the inertia is 0.
    sigma_critical_ : float or None
        The critical temperature the annealing started above (``sigma="auto"``).
    path_ : AnnealPath or None
        With ``record_path=True`` and a soft assignment: per temperature, the
        sigma, converged centers, objective, inertia, support sizes, soft
        fraction and iterations used (see :class:`fastrbfkm.AnnealPath`).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Names of the features, when X has string column names.

    Notes
    -----
    Large data. ``fit``, ``predict``, ``predict_proba``, ``transform`` and
    ``score`` accept a ``dask.array.Array`` chunked along its rows (see
    :mod:`fastrbfkm.dask`): the fit runs on the current dask scheduler
    (threads, or a ``dask.distributed`` client), moves only k x d statistics
    per pass and gives the numpy result to rounding; predictions are lazy.
    A ``numpy.memmap`` (``np.load(path, mmap_mode="r")``) larger than
    scikit-learn's ``working_memory`` (``sklearn.config_context``, 1024 MiB by
    default) is fitted by streaming row blocks of at most that size from the
    file. In both cases ``init="k-means++"`` is k-means|| (a few passes
    instead of k).

    Examples
    --------
    >>> import numpy as np
    >>> from fastrbfkm import RBFKMeans
    >>> X = np.array([[0.0, 0.1], [0.2, 0.0], [5.0, 5.1], [5.2, 4.9]])
    >>> km = RBFKMeans(n_clusters=2, random_state=0).fit(X)
    >>> km.predict([[0.1, 0.0], [5.0, 5.0]]).tolist() == km.labels_[[0, 2]].tolist()
    True
    """

    def __init__(
        self,
        n_clusters=8,
        *,
        max_clusters=None,
        assignment="entmax15",
        sigma="auto",
        sigma_min=None,
        cooling=0.8,
        init="k-means++",
        n_init=1,
        max_iter=300,
        anneal_steps=3,
        anneal_size="auto",
        train_size=None,
        tol=1e-4,
        refine=True,
        record_path=False,
        random_state=None,
        verbose=0,
        backend="auto",
        metric="euclidean",
    ):
        self.n_clusters = n_clusters
        self.max_clusters = max_clusters
        self.assignment = assignment
        self.sigma = sigma
        self.sigma_min = sigma_min
        self.cooling = cooling
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.anneal_steps = anneal_steps
        self.anneal_size = anneal_size
        self.train_size = train_size
        self.tol = tol
        self.refine = refine
        self.record_path = record_path
        self.random_state = random_state
        self.verbose = verbose
        self.backend = backend
        self.metric = metric

    # ------------------------------------------------------------------ checks

    _parameter_constraints: ClassVar[dict] = {
        **BaseRBFKMeans._shared_constraints,
        "n_clusters": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
        "max_clusters": [None, Interval(numbers.Integral, 2, None, closed="left")],
        "sigma_min": [None, Interval(numbers.Real, 0, None, closed="neither")],
        "n_init": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
        "anneal_steps": [Interval(numbers.Integral, 1, None, closed="left")],
        "anneal_size": [
            StrOptions({"auto"}),
            None,
            Interval(numbers.Integral, 1, None, closed="left"),
        ],
        "train_size": [None, Interval(numbers.Integral, 1, None, closed="left")],
        "refine": ["boolean"],
        "record_path": ["boolean"],
    }
    _finite_params: ClassVar[tuple[str, ...]] = ("sigma", "sigma_min", "tol")

    def _check_params(self) -> None:
        """The shared checks, then the order of the temperatures."""
        super()._check_params()
        if self.sigma_min is not None and not isinstance(self.sigma, str):
            if self.sigma_min > self.sigma:
                raise ValueError(
                    f"sigma_min={self.sigma_min!r} must not be above sigma={self.sigma!r}."
                )

    def _most_clusters(self) -> tuple[str, int]:
        if self.n_clusters == "auto":
            return "max_clusters", DEFAULT_MAX_CLUSTERS if self.max_clusters is None else int(
                self.max_clusters
            )
        return super()._most_clusters()

    # ------------------------------------------------------------------- fit

    @one_blas_thread
    @explains_memory
    def fit(self, X, y=None, sample_weight=None):
        """Compute the clustering.

        Parameters
        ----------
        X : array-like, scipy.sparse, numpy.memmap or dask.array.Array, shape (n, n_features)
            Training data. float32 stays float32; anything else becomes float64.
            A sparse matrix is read as CSR, never densified; a dask array
            must have all features in one chunk; a memory-mapped file larger
            than the working memory is streamed (see Notes).
        y : Ignored
            Not used, present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights with a positive sum; None means all ones.

        Returns
        -------
        self : RBFKMeans
            The fitted estimator.
        """
        every = self._open_fit_rows(X, sample_weight)
        d = every.d
        mode = check_assignment(self.assignment)
        rng = check_random_state(self.random_state)
        rows = every  # the rows the centers are learnt from
        if self.train_size is not None and every.n > self.train_size:
            key = rng.randint(np.iinfo(np.int32).max)
            rows = annealing_sample(every, int(self.train_size), key)
        diagram = None
        if self.n_clusters == "auto":
            diagram = diagram_of_rows(
                rows,
                self._most_clusters()[1],
                K.SOFTMAX,
                PHASE_COOLING,
                int(self.max_iter),
                PHASE_TOL,
                self._anneal_rows(self._most_clusters()[1]),
                np.random.default_rng(rng.randint(np.iinfo(np.int32).max)),
            )
            k = diagram.n_clusters_
        else:
            k = int(self.n_clusters)
        if rows is not every and rows.n < k:
            raise ValueError(
                f"train_size={self.train_size} should be >= n_clusters={k}: the centers are "
                "learnt from that many rows."
            )
        # scikit-learn's tolerance: tol times the mean (unweighted) feature
        # variance (a pass over the data, skipped when tol is 0).
        tol = 0.0
        if self.tol > 0:
            tol = float(rows.moments(weighted=False).variance.sum()) / d * self.tol
        given = not isinstance(self.init, str) and not callable(self.init)
        if isinstance(self.n_init, str):  # "auto", as scikit-learn
            n_init = 10 if callable(self.init) or (not given and self.init == "random") else 1
        else:
            n_init = int(self.n_init)
        if given and n_init != 1:
            warnings.warn(
                f"Explicit initial center position passed: performing only one init in "
                f"{type(self).__name__} instead of n_init={n_init}.",
                RuntimeWarning,
                stacklevel=2,
            )
            n_init = 1
        soft = mode != K.HARD
        moments = rows.moments() if soft else None
        sigma_c = None
        if soft and self.sigma == "auto":
            sigma_c = critical_from_variance(largest_variance(rows, moments), k, mode)

        best = None
        # The Lloyd runs over these rows, in every run, one after another:
        # the pruning bounds carry over from each to the next.
        hard = hard_passes(rows, k)
        for run in range(n_init):
            seed = rng.randint(np.iinfo(np.int32).max)
            init = self.init
            if callable(init):
                data = rows.as_given() if isinstance(rows, HostRows) else X
                init = self._init_array(init(data, k, np.random.RandomState(seed)), rows, k)
            result = self._fit_once(rows, hard, mode, k, tol, moments, sigma_c, init, seed, run)
            result["labels"], result["inertia"], result["counts"] = every.assign(result["centers"])
            if best is None or result["inertia"] < best["inertia"]:
                best = result

        distinct = int(np.count_nonzero(best["counts"]))
        if distinct < k:
            warnings.warn(
                f"Number of distinct clusters ({distinct}) found smaller than n_clusters ({k}). "
                "Possibly due to duplicate points in X.",
                ConvergenceWarning,
                stacklevel=2,
            )
        # Everything succeeded: only now touch the fitted attributes.
        validate_data(self, X, reset=True, skip_check_array=True)
        self.n_clusters_ = k
        self.phase_diagram_ = diagram
        self.cluster_centers_ = best["centers"]
        self.labels_ = best["labels"]
        self.inertia_ = every.metric.inertia(best["inertia"])
        self.n_iter_ = best["n_iter"]
        self.sigma_ = best["sigma"]
        self.soft_sigma_ = self._soft_sigma(best["inertia"], every.weight, d)
        self.sigma_critical_ = sigma_c
        self.path_ = best["path"] if self.record_path and soft else None
        self.start_ = best["start"]
        return self

    def _fit_once(
        self, rows, hard: HardPasses, mode, k, tol, moments, sigma_c, init, seed, run
    ) -> dict:
        rng = np.random.default_rng(seed)
        n_iter = 0
        path = None
        if mode != K.HARD and self.sigma == "auto":
            center = rows.metric.mean(moments.mean, moments.covariance)
            C = np.repeat(center[None, :], k, axis=0).astype(rows.dtype)
        else:
            C = rows.initial_centers(k, init, rng)
            C = rows.metric.centers(C)  # given centers, or rows of X: projected
            if self.verbose:
                print("Initialization complete")
        sigma = 0.0
        start = None
        # A soft fit that refine finishes only needs its soft phase as a
        # guide: that and the polish run on rows in memory (a sample of
        # large data), and Lloyd and the swaps end on every row.
        guides = mode != K.HARD and self.refine
        guide = rows
        m = self._anneal_rows(k)
        if guides and m is not None:
            guide = annealing_sample(rows, m, int(rng.integers(2**63)) if rows.n > m else 0)
        plan = None
        if mode != K.HARD:
            plan = AnnealPlan.for_estimator(
                self.sigma,
                self.sigma_min,
                self.cooling,
                sigma_c,
                rows.dtype,
                guides,
                self.anneal_steps,
                self.max_iter,
            )
        if plan is not None:
            scale2 = float(moments.variance.sum()) / rows.d
            length = None if plan.open_ended else len(plan.schedule.temperatures())
            path = run_anneal(
                guide,
                C,
                mode,
                AnnealSettings(plan, tol, scale2, record_all=self.record_path),
                rng,
                callback=self._progress(run, length),
            )
            self._close_progress()
            C = path.centers[-1]
            sigma = float(path.sigmas[-1])
            n_iter += int(path.n_iter.sum())
        if plan is None or self.refine:
            # Lloyd's algorithm, swap moves and single-point transfers on the
            # annealed rows (in memory), then Lloyd and the swaps on every row
            # when those were a sample.
            # The swap moves compare Lloyd runs that stop at a looser
            # tolerance (POLISH_TOL_FACTOR x tol): which moves pay shows long
            # before the centers creep to tol; the last run ends at tol.
            polish = tol * POLISH_TOL_FACTOR
            sources = [guide] if guide.n == rows.n else [guide, rows]
            # Each source's Lloyd runs carry their bounds from one to the next.
            guide_hard = hard if guide is rows else hard_passes(guide, k)
            for source in sources:
                passes = guide_hard if source is guide else hard
                # A hard fit's last Lloyd run is measured by the final assignment.
                last = mode == K.HARD and source is rows
                report = self._lloyd_report(tol) if self.verbose else None
                lloyd = run_lloyd(
                    source,
                    C,
                    int(self.max_iter),
                    tol if mode == K.HARD else polish,
                    mode != K.HARD or not last,
                    report,
                    passes=passes,
                )
                if guides and source is guide and self.sigma == "auto":
                    lloyd, start = self._against_kmeanspp(guide, lloyd, k, polish, seed, passes)
                if mode != K.HARD:
                    many = k >= MANY_CLUSTERS
                    rounds = EVERY_ROW_SWAP_ROUNDS if many and source is not guide else None
                    lloyd = improve_by_swaps(
                        source, lloyd, int(self.max_iter), polish, rounds=rounds, passes=passes
                    )
                    # sequential: rows in memory only; Euclidean gains only
                    if guides and source is guide and not rows.sphere:
                        lloyd = improve_by_transfers(source, lloyd, int(self.max_iter))
                    if source is sources[-1]:  # the fixed point, to tol
                        final = run_lloyd(
                            source, lloyd.centers, int(self.max_iter), tol, passes=passes
                        )
                        lloyd = LloydResult(
                            final.centers, final.inertia, lloyd.n_iter + final.n_iter
                        )
                C = lloyd.centers
                n_iter += lloyd.n_iter
            sigma = 0.0
        return {
            "centers": np.ascontiguousarray(C, dtype=rows.dtype),
            "n_iter": n_iter,
            "sigma": sigma,
            "path": path,
            "start": start,
        }

    def _against_kmeanspp(self, guide, annealed, k: int, tol: float, seed: int, passes: HardPasses):
        """The annealed centers at their Lloyd fixed point on the annealed
        rows, or a greedy k-means++ start's, whichever has the lower
        inertia there, and which it was ("annealing" or "k-means++").

        The polish that follows (swap moves, transfers, Lloyd on every row)
        only lowers the inertia, so the fit never ends above a k-means++
        start brought to a Lloyd fixed point on the same rows: the
        annealing has to beat it, not only to exist. ``passes`` are the
        guide's hard passes (the annealed centers' Lloyd run made them).
        """
        rng = np.random.default_rng([seed, 1])  # its own stream: the annealing's is unchanged
        C = guide.initial_centers(k, "k-means++", rng)
        C = guide.metric.centers(C)
        # Not cut short when it looks to be losing (``beat``): a k-means++
        # start's Lloyd run often makes large late gains, and ended lower
        # than the annealing after such a cut on 3000 x 8 rows at k = 12.
        seeded = run_lloyd(guide, C, int(self.max_iter), tol, passes=passes)
        n_iter = annealed.n_iter + seeded.n_iter  # both runs were made
        if seeded.inertia < annealed.inertia:
            return LloydResult(seeded.centers, seeded.inertia, n_iter), "k-means++"
        return LloydResult(annealed.centers, annealed.inertia, n_iter), "annealing"

    def _anneal_rows(self, k: int) -> int | None:
        if self.anneal_size == "auto":
            return auto_anneal_size(k)
        return None if self.anneal_size is None else int(self.anneal_size)

    # -------------------------------------------------------------- progress

    def _progress(self, run: int, total: int | None):
        self._bar = None
        if not self.verbose:
            return None
        try:
            from tqdm.auto import tqdm
        except ImportError:
            tqdm = None
        if tqdm is not None:
            self._bar = tqdm(total=total, desc=f"init {run}: annealing", unit="T", leave=False)
        started = time.perf_counter()

        def report(t, sigma, C, summary, its):
            active = len(np.unique(C, axis=0))
            soft = summary[K.SOFT]
            if self._bar is not None:
                self._bar.set_postfix(sigma=f"{sigma:.3g}", centers=active, soft=f"{soft:.0f}")
                self._bar.update(1)
            else:
                print(
                    f"[RBFKMeans] init {run} T{t:03d} sigma={sigma:.4g} centers={active} "
                    f"iterations={its} objective={summary[K.OBJECTIVE]:.6g} "
                    f"soft rows={soft:.0f} ({time.perf_counter() - started:.1f} s)",
                    flush=True,
                )

        return report

    @staticmethod
    def _lloyd_report(tol: float):
        """Print hard Lloyd iterations as scikit-learn's ``KMeans`` does."""

        def report(iteration: int, inertia: float, shift: float) -> None:
            print(f"Iteration {iteration}, inertia {inertia}.")
            if shift == 0.0:
                print(f"Converged at iteration {iteration}: strict convergence.")
            elif shift <= tol:
                print(
                    f"Converged at iteration {iteration}: center shift {shift} within "
                    f"tolerance {tol}."
                )

        return report

    def _close_progress(self) -> None:
        if getattr(self, "_bar", None) is not None:
            self._bar.close()
        self._bar = None
