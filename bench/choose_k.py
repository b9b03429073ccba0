"""How many clusters: ``fastrbfkm.phase_diagram`` against scikit-learn's sweeps.

Every data set has a known number of clusters ``c``; every contender picks a
count from the same range ``k = 2 .. M``, with ``M = max(10, 2 c)`` (the
phase diagram wants its ``max_clusters`` well above the count it is to find,
and the sweeps get the same range):

- ``phase_diagram``: ``fastrbfkm.phase_diagram(X, max_clusters=M,
  random_state=0)``, its ``n_clusters_`` (the count that lasts longest in
  log sigma as the annealing cools).
- ``silhouette``: ``KMeans(k, n_init=10, random_state=0)`` for every ``k``
  in ``2 .. M`` and ``sklearn.metrics.silhouette_score`` on the full data
  (no sampling); the ``k`` of the largest score.
- ``CH`` (Calinski-Harabasz, largest) and ``DB`` (Davies-Bouldin, smallest)
  from the same KMeans fits. The fits are made once per ``k`` and their
  times recorded; every sweep's time is the sum of the fit times plus the
  time of its own scores, as if it had been run alone.
- ``gap``: the gap statistic of Tibshirani, Walther and Hastie (2001), see
  :func:`gap_statistic`; its time is the data's fits plus the reference
  sets' draws and fits.

Before anything is timed, ``phase_diagram`` and ``KMeans`` run once on a
tiny array, so that numba's compilation (and first-call imports) are not
counted. Every contender runs in this one process, one after the other, at
the default thread settings (``phase_diagram`` uses numba's threads, KMeans
OpenMP's).

Data sets (34 generated, 3 real; every generated set seeded by a CRC-32 of
its name, numpy only):

- ``c`` Gaussian clusters in ``d`` dimensions, ``c`` from 2 to 50, ``d`` = 2
  or 10 to 50. Balanced: 200 points a cluster for ``c <= 4``, 150 for
  ``c <= 20``, 120 above (``n <= 6000``, as the silhouette is O(n^2));
  unbalanced: the same ``n``, cluster sizes in geometric progression from 1
  to 10 (ratio 1:10 between the smallest and the largest), assigned to the
  means in random order.
- Shape: isotropic (standard deviation ``s = 1`` per coordinate) or
  anisotropic: every cluster its own random rotation (QR of a Gaussian
  matrix) and its own axis standard deviations, uniform in [0.4, 1.6]
  (``s = 1.6``, the largest a cluster can have).
- The means are packed with a minimum distance ``r`` (rejection sampling,
  random sequential packing): candidates uniform in the cube ``[0, L]^d``
  are accepted when at least ``r`` from every mean accepted before; after
  200 rejections in a row the packing starts again in a cube 5% larger,
  from ``L = 0.5 r sqrt(6 / d)`` (a side at which two uniform points are
  about ``r / 2`` apart). The means so end up about as close as the bound
  allows in every dimension (the set table lists the median distance from a
  mean to its nearest other one, in units of ``s``): means drawn in a fixed
  box would lie ever farther apart as ``d`` grows (uniform points in
  ``[0, L]^d`` are about ``L sqrt(d / 6)`` apart), and "overlapping" would
  mean less and less.
- ``separated``: ``r = 8 s``. Along the line between two means neither
  cluster's standard deviation exceeds ``s``, so two clusters overlap by at
  most a pairwise Bayes error of ``Phi(-4) = 3e-5``: none overlaps another.
- ``overlapping``: ``r`` is set (bisection in log ``r``, the draws fixed)
  so that the set's nearest-mean error is 6%: the share of its points that
  lie nearer (Euclidean) to another cluster's true mean than to their own,
  what K-means gets wrong given the true means (for isotropic balanced
  clusters, the Bayes error). Scaling the means by ``r`` with the noise
  fixed, every point's error only falls as ``r`` grows, so the bisection is
  exact. 6% is about what ``r = 3.5 s`` gives on 2-D isotropic packings
  (5-7%); a fixed ``r`` would mean more overlap as ``d`` grows, as a
  tightly packed mean has up to ``c - 1`` neighbours near ``r`` in high
  dimensions and a handful in 2-D (``r = 3.5 s`` gives 8-23% at
  ``d = 10 .. 50``), so the overlapping sets' ``r`` grows with ``d`` and
  ``c``. (A Bayes error with the true covariances would not do: in 40-D
  anisotropic clusters are told apart by their shapes alone, even on top
  of each other, which K-means cannot use.) The set table lists every
  set's ``r / s`` and nearest-mean error (separated sets too).
- Real: scikit-learn's ``load_iris`` (3 classes, raw), ``load_wine`` (3,
  standardized: its features' scales differ by 1000x) and ``load_digits``
  (10, raw), counted as their own category ``real``.

Printed (and written as markdown with ``--out``): the machine and the load
average before and after; the sets; per set every contender's count (the
correct ones in bold) and the times of ``phase_diagram`` and of the
silhouette sweep; per category (separated, overlapping, real) and contender
the count of sets recovered, the median time per set and the total; the
same counts by dimension, balance and shape of the generated sets; on the
separated sets, the critical temperatures: over every split of the phase
diagrams, predicted / observed (``Split.predicted / Split.observed``), for
the splits bracketed by a try that closed again (observed: the geometric
mean of the bracket) and for those that opened at their first try
(observed: a lower bound, so a ratio above 1 is expected); and the targets,
met or missed: ``phase_diagram`` recovers >= 90% of the separated sets; on
the overlapping ones at least as many as the best of silhouette, CH and DB;
its total time is at most the silhouette sweep's; every split's predicted
critical temperature is within 10% of the observed one on the separated
sets.

Usage: ``python bench/choose_k.py [--quick] [--out choose_k.md] [--only NAME_SUBSTRING]``
(``--quick``: four small sets, about 15 s, for testing; the full run is
estimated at 25-35 minutes on an idle 2-core machine, most of it the
sweeps and the gap statistic's reference fits on the 30- and 50-cluster
sets. KMeans' OpenMP threads slow down many times over when other work
shares the cores, so compare times only within one run, at a low load.)
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
import zlib
from dataclasses import dataclass, field

import numpy as np
from machine import cpu_model, load_1min, usable_cpus, versions
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import calinski_harabasz_score, davies_bouldin_score, silhouette_score
from sklearn.preprocessing import StandardScaler

import fastrbfkm as fk

#: Minimum distance between two means of a separated set, in units of the
#: largest standard deviation a cluster can have along any direction.
SEPARATED_R = 8.0
#: The nearest-mean error the overlapping sets are set to.
OVERLAP_ERROR = 0.06
#: Axis standard deviations of the anisotropic clusters, uniform in this range.
ANISO_SCALES = (0.4, 1.6)
#: Largest / smallest cluster of an unbalanced set.
UNBALANCED_RATIO = 10.0
#: Packing: rejections in a row before the cube grows, and by what factor.
PACK_PATIENCE = 200
PACK_GROW = 1.05

SWEEP_N_INIT = 10
GAP_B = 10
GAP_N_INIT = 3

CONTENDERS = ("phase_diagram", "silhouette", "CH", "DB", "gap")
KINDS = ("separated", "overlapping", "real")

#: The generated sets: (count, d, balance, shape), each drawn separated and
#: overlapping.
GRID = (
    (2, 2, "balanced", "isotropic"),
    (3, 2, "balanced", "isotropic"),
    (3, 10, "balanced", "isotropic"),
    (4, 30, "unbalanced", "isotropic"),
    (5, 2, "balanced", "anisotropic"),
    (6, 2, "balanced", "isotropic"),
    (6, 10, "balanced", "isotropic"),
    (8, 2, "unbalanced", "isotropic"),
    (8, 40, "balanced", "anisotropic"),
    (10, 2, "unbalanced", "anisotropic"),
    (10, 10, "balanced", "anisotropic"),
    (12, 2, "balanced", "isotropic"),
    (15, 20, "unbalanced", "isotropic"),
    (20, 2, "balanced", "anisotropic"),
    (20, 50, "balanced", "isotropic"),
    (30, 10, "unbalanced", "anisotropic"),
    (50, 2, "balanced", "isotropic"),
)
#: ``--quick``: four small sets of the grid.
QUICK = ("sep-c3-d2", "sep-c6-d10", "ovl-c6-d2", "ovl-c3-d10")


def max_clusters(count: int) -> int:
    """The range's top ``M = max(10, 2 c)`` for a set of ``c`` clusters."""
    return max(10, 2 * count)


@dataclass
class DataSet:
    """One data set and how it was made (NaN where it does not apply)."""

    name: str
    kind: str
    X: np.ndarray
    count: int
    balance: str = "-"
    shape: str = "-"
    r: float = float("nan")  # minimum distance between means, in units of s
    nearest: float = float("nan")  # median nearest-mean distance, in units of s
    error: float = float("nan")  # nearest-mean error

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def generated(self) -> bool:
        return self.kind != "real"


def set_name(kind: str, count: int, d: int, balance: str, shape: str) -> str:
    """``sep-c8-d2-unbal-aniso`` and the like."""
    name = f"{'sep' if kind == 'separated' else 'ovl'}-c{count}-d{d}"
    if balance == "unbalanced":
        name += "-unbal"
    if shape == "anisotropic":
        name += "-aniso"
    return name


def packed_means(rng: np.random.Generator, k: int, d: int) -> np.ndarray:
    """``k`` points in ``d`` dimensions at least 1 apart, packed about as
    tightly as that allows (random sequential packing in a cube that grows
    by ``PACK_GROW`` after ``PACK_PATIENCE`` rejections in a row)."""
    side = 0.5 * np.sqrt(6.0 / d)
    while True:
        means = np.empty((k, d))
        means[0] = rng.uniform(0.0, side, d)
        placed, misses = 1, 0
        while placed < k and misses < PACK_PATIENCE:
            candidate = rng.uniform(0.0, side, d)
            if np.min(((means[:placed] - candidate) ** 2).sum(axis=1)) >= 1.0:
                means[placed] = candidate
                placed += 1
                misses = 0
            else:
                misses += 1
        if placed == k:
            return means
        side *= PACK_GROW


def cluster_sizes(k: int, n: int, balance: str, rng: np.random.Generator) -> np.ndarray:
    """Sizes summing to ``n``: equal, or in geometric progression from 1 to
    ``UNBALANCED_RATIO`` in random order."""
    if balance == "balanced":
        weights = np.ones(k)
    else:
        weights = rng.permutation(UNBALANCED_RATIO ** np.linspace(0.0, 1.0, k))
    sizes = np.floor(n * weights / weights.sum()).astype(np.int64)
    sizes[np.argsort(-(n * weights / weights.sum() - sizes))[: n - sizes.sum()]] += 1
    return sizes


def random_rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    """A uniformly random orthogonal matrix (QR of a Gaussian one, signs fixed)."""
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def nearest_mean_error(X: np.ndarray, labels: np.ndarray, means: np.ndarray) -> float:
    """Share of the rows nearer (Euclidean) to another cluster's true mean
    than to their own: what K-means gets wrong given the true means."""
    d2 = (X**2).sum(axis=1)[:, None] - 2.0 * X @ means.T + (means**2).sum(axis=1)[None, :]
    return float(np.mean(d2.argmin(axis=1) != labels))


def generate(kind: str, count: int, d: int, balance: str, shape: str) -> DataSet:
    """One generated set of the grid (see the module's docstring)."""
    name = set_name(kind, count, d, balance, shape)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    per = 200 if count <= 4 else 150 if count <= 20 else 120
    n = per * count
    sizes = cluster_sizes(count, n, balance, rng)
    labels = np.repeat(np.arange(count), sizes)
    unit_means = packed_means(rng, count, d)
    z = rng.standard_normal((n, d))
    if shape == "anisotropic":
        s = ANISO_SCALES[1]
        noise = np.empty((n, d))
        for j in range(count):
            rotation, scales = random_rotation(rng, d), rng.uniform(*ANISO_SCALES, d)
            rows = labels == j
            noise[rows] = (z[rows] * scales) @ rotation.T
    else:
        s = 1.0
        noise = z

    def error_at(r: float) -> float:
        means = r * s * unit_means
        return nearest_mean_error(means[labels] + noise, labels, means)

    if kind == "separated":
        r = SEPARATED_R
    else:  # bisection in log r: every row's error only falls as r grows
        lo, hi = 0.5, 16.0
        for _ in range(30):
            mid = np.sqrt(lo * hi)
            lo, hi = (mid, hi) if error_at(mid) > OVERLAP_ERROR else (lo, mid)
        r = hi
    means = r * s * unit_means
    gaps = np.sqrt(((unit_means[:, None] - unit_means[None]) ** 2).sum(axis=-1))
    np.fill_diagonal(gaps, np.inf)
    return DataSet(
        name=name,
        kind=kind,
        X=means[labels] + noise,
        count=count,
        balance=balance,
        shape=shape,
        r=r,
        nearest=float(r * np.median(gaps.min(axis=1))),
        error=error_at(r),
    )


def real_sets() -> list[DataSet]:
    """iris (raw), wine (standardized) and digits (raw)."""
    return [
        DataSet("iris", "real", load_iris().data.astype(np.float64), 3),
        DataSet("wine (standardized)", "real", StandardScaler().fit_transform(load_wine().data), 3),
        DataSet("digits", "real", load_digits().data.astype(np.float64), 10),
    ]


def data_sets(quick: bool, only: str | None) -> list[DataSet]:
    """The sets to run, in order: separated, overlapping, real."""
    specs = [(kind, *row) for kind in ("separated", "overlapping") for row in GRID]
    if quick:
        specs = [spec for spec in specs if set_name(*spec) in QUICK]
    if only:
        specs = [spec for spec in specs if only in set_name(*spec)]
    sets = []
    for spec in specs:
        print(f"generating {set_name(*spec)}", file=sys.stderr, flush=True)
        sets.append(generate(*spec))
    if not quick:
        sets += [ds for ds in real_sets() if not only or only in ds.name]
    return sets


def gap_statistic(X: np.ndarray, inertia: dict, ks: list[int], seed: int = 0) -> int:
    """The count the gap statistic picks (Tibshirani, Walther & Hastie 2001).

    ``W_k`` is the pooled within-cluster sum of squares of ``k`` clusters,
    the KMeans inertia: ``inertia[k]``, from the sweep's
    ``KMeans(k, n_init=10, random_state=0)`` fits of ``X``. ``B = 10``
    reference sets of ``X``'s size are drawn uniformly over the box aligned
    with ``X``'s principal components (the paper's variant (b): the data
    centered and rotated onto its right singular vectors, uniform between
    the extremes of every component, rotated back), and every reference set
    ``b`` is fitted with ``KMeans(k, n_init=3, random_state=b)`` (3 starts
    rather than 10 to keep the cost down) for its ``W*_kb``. Then
    ``Gap(k) = mean_b log W*_kb - log W_k``, ``sd_k`` the standard deviation
    of ``log W*_kb`` over ``b`` (dividing by ``B``, as in the paper) and
    ``s_k = sd_k sqrt(1 + 1/B)``; the count is the smallest ``k`` in
    ``2 .. M - 1`` with ``Gap(k) >= Gap(k + 1) - s_{k+1}``, or ``M`` when
    there is none (``ks`` is ``2 .. M``).
    """
    rng = np.random.default_rng(seed)
    mean = X.mean(axis=0)
    _, _, vt = np.linalg.svd(X - mean, full_matrices=False)
    components = (X - mean) @ vt.T
    low, high = components.min(axis=0), components.max(axis=0)
    log_w = np.empty((len(ks), GAP_B))
    for b in range(GAP_B):
        reference = rng.uniform(low, high, size=components.shape) @ vt + mean
        for i, k in enumerate(ks):
            fit = KMeans(k, n_init=GAP_N_INIT, random_state=b).fit(reference)
            log_w[i, b] = np.log(fit.inertia_)
    gap = log_w.mean(axis=1) - np.log([inertia[k] for k in ks])
    s = log_w.std(axis=1) * np.sqrt(1.0 + 1.0 / GAP_B)
    for i in range(len(ks) - 1):
        if gap[i] >= gap[i + 1] - s[i + 1]:
            return ks[i]
    return ks[-1]


@dataclass
class Result:
    """Every contender's count and seconds on one set, and the phase
    diagram's splits."""

    data: DataSet
    M: int
    chosen: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    splits: list = field(default_factory=list)

    def correct(self, contender: str) -> bool:
        return self.chosen[contender] == self.data.count


def run_set(ds: DataSet) -> Result:
    """All contenders on one set."""
    M = max_clusters(ds.count)
    ks = list(range(2, M + 1))
    out = Result(ds, M)
    say = lambda what: print(f"  {ds.name}: {what}", file=sys.stderr, flush=True)  # noqa: E731

    start = time.perf_counter()
    diagram = fk.phase_diagram(ds.X, max_clusters=M, random_state=0)
    out.seconds["phase_diagram"] = time.perf_counter() - start
    out.chosen["phase_diagram"] = int(diagram.n_clusters_)
    out.splits = list(diagram.splits)
    say(f"phase_diagram {out.chosen['phase_diagram']} in {out.seconds['phase_diagram']:.2f} s")

    labels, inertia, fit_seconds = {}, {}, 0.0
    for k in ks:
        start = time.perf_counter()
        fit = KMeans(k, n_init=SWEEP_N_INIT, random_state=0).fit(ds.X)
        fit_seconds += time.perf_counter() - start
        labels[k], inertia[k] = fit.labels_, float(fit.inertia_)
    say(f"KMeans fits k = 2..{M} in {fit_seconds:.2f} s")

    for contender, score, sign in (
        ("silhouette", silhouette_score, 1.0),
        ("CH", calinski_harabasz_score, 1.0),
        ("DB", davies_bouldin_score, -1.0),
    ):
        start = time.perf_counter()
        scores = [sign * score(ds.X, labels[k]) for k in ks]
        out.seconds[contender] = fit_seconds + time.perf_counter() - start
        out.chosen[contender] = ks[int(np.argmax(scores))]

    start = time.perf_counter()
    out.chosen["gap"] = gap_statistic(ds.X, inertia, ks)
    out.seconds["gap"] = fit_seconds + time.perf_counter() - start
    say(
        "  ".join(f"{c} {out.chosen[c]} ({out.seconds[c]:.2f} s)" for c in CONTENDERS[1:])
        + f"  (true {ds.count})"
    )
    return out


def warm_up() -> None:
    """phase_diagram and KMeans once on a tiny array: compile, import."""
    rng = np.random.default_rng(0)
    X = np.concatenate([m + rng.normal(size=(40, 2)) for m in ((0, 0), (20, 0), (0, 20))])
    fk.phase_diagram(X, max_clusters=6, random_state=0)
    fit = KMeans(3, n_init=2, random_state=0).fit(X)
    silhouette_score(X, fit.labels_)
    calinski_harabasz_score(X, fit.labels_)
    davies_bouldin_score(X, fit.labels_)


# --- the report -------------------------------------------------------------------------


def table(header: list[str], rows: list[list]) -> list[str]:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines


def fmt(x: float, spec: str) -> str:
    return "-" if np.isnan(x) else format(x, spec)


def sets_table(results: list[Result]) -> list[str]:
    rows = [
        [
            r.data.name,
            r.data.kind,
            r.data.balance,
            r.data.shape,
            r.data.n,
            r.data.d,
            r.data.count,
            fmt(r.data.r, ".2f"),
            fmt(r.data.nearest, ".2f"),
            fmt(r.data.error, ".4f"),
        ]
        for r in results
    ]
    header = ["set", "kind", "balance", "shape", "n", "d", "true count", "r / s"]
    return table([*header, "median nearest-mean distance / s", "nearest-mean error"], rows)


def results_table(results: list[Result]) -> list[str]:
    rows = []
    for r in results:
        picks = [f"**{r.chosen[c]}**" if r.correct(c) else str(r.chosen[c]) for c in CONTENDERS]
        times = [f"{r.seconds['phase_diagram']:.2f}", f"{r.seconds['silhouette']:.2f}"]
        rows.append([r.data.name, r.data.kind, r.data.n, r.data.d, r.data.count, r.M])
        rows[-1] += picks + times
    header = ["set", "kind", "n", "d", "true", "M", *CONTENDERS]
    return table([*header, "phase_diagram (s)", "silhouette sweep (s)"], rows)


def summary_table(results: list[Result]) -> list[str]:
    rows = []
    for kind in KINDS:
        group = [r for r in results if r.data.kind == kind]
        if not group:
            continue
        for c in CONTENDERS:
            seconds = [r.seconds[c] for r in group]
            right = sum(r.correct(c) for r in group)
            median, total = f"{np.median(seconds):.2f}", f"{sum(seconds):.1f}"
            rows.append([kind, c, f"{right} / {len(group)}", median, total])
    return table(["category", "contender", "recovered", "median s per set", "total s"], rows)


def facets_table(results: list[Result]) -> list[str]:
    generated = [r for r in results if r.data.generated]
    facets = (
        ("2-D", lambda ds: ds.d == 2),
        ("10-50-D", lambda ds: ds.d > 2),
        ("balanced", lambda ds: ds.balance == "balanced"),
        ("unbalanced", lambda ds: ds.balance == "unbalanced"),
        ("isotropic", lambda ds: ds.shape == "isotropic"),
        ("anisotropic", lambda ds: ds.shape == "anisotropic"),
    )
    rows = []
    for kind in KINDS[:2]:
        for label, test in facets:
            group = [r for r in generated if r.data.kind == kind and test(r.data)]
            if group:
                counts = [f"{sum(r.correct(c) for r in group)} / {len(group)}" for c in CONTENDERS]
                rows.append([kind, label, *counts])
    return table(["kind", "sets", *CONTENDERS], rows)


def critical_ratios(results: list[Result]) -> dict[str, np.ndarray]:
    """predicted / observed of every split on the separated sets, by bracket."""
    bracketed, first_try = [], []
    for r in results:
        if r.data.kind == "separated":
            for split in r.splits:
                ratio = split.predicted / split.observed
                (first_try if split.closed_at is None else bracketed).append(ratio)
    return {"bracketed": np.array(bracketed), "first try": np.array(first_try)}


def critical_table(ratios: dict[str, np.ndarray]) -> list[str]:
    rows = []
    for label, values in ratios.items():
        if len(values) == 0:
            rows.append([label, 0] + ["-"] * 6)
            continue
        q = np.quantile(values, [0.0, 0.1, 0.5, 0.9, 1.0])
        within = np.mean(np.abs(values - 1.0) <= 0.1)
        rows.append([label, len(values), *(f"{x:.3f}" for x in q), f"{within:.0%}"])
    header = ["splits", "count", "min", "10%", "median", "90%", "max", "within 10%"]
    return table(header, rows)


def targets(results: list[Result], ratios: dict[str, np.ndarray]) -> list[str]:
    """The target lines, met or missed."""
    lines = []

    def line(met: bool, text: str) -> None:
        lines.append(f"- **{'met' if met else 'missed'}**: {text}")

    separated = [r for r in results if r.data.kind == "separated"]
    if separated:
        right = sum(r.correct("phase_diagram") for r in separated)
        line(
            right >= 0.9 * len(separated),
            f"phase_diagram recovers >= 90% of the separated sets: {right} / {len(separated)}",
        )
    overlapping = [r for r in results if r.data.kind == "overlapping"]
    if overlapping:
        right = sum(r.correct("phase_diagram") for r in overlapping)
        best = {c: sum(r.correct(c) for r in overlapping) for c in ("silhouette", "CH", "DB")}
        top = max(best, key=best.get)
        line(
            right >= best[top],
            f"on the overlapping sets phase_diagram recovers at least as many as the best of "
            f"silhouette/CH/DB: {right} against {best[top]} ({top}) of {len(overlapping)}",
        )
    ours = sum(r.seconds["phase_diagram"] for r in results)
    theirs = sum(r.seconds["silhouette"] for r in results)
    line(
        ours <= theirs,
        f"phase_diagram's total time <= the silhouette sweep's: {ours:.1f} s against "
        f"{theirs:.1f} s ({ours / theirs:.2f}x), over all {len(results)} sets",
    )
    if separated:
        every = np.concatenate(list(ratios.values()))
        ok = {label: int(np.sum(np.abs(v - 1.0) <= 0.1)) for label, v in ratios.items()}
        detail = ", ".join(f"{label} {ok[label]} / {len(v)}" for label, v in ratios.items())
        line(
            bool(np.all(np.abs(every - 1.0) <= 0.1)),
            f"every split's predicted critical temperature within 10% of the observed one on the "
            f"separated sets: {int(np.sum(np.abs(every - 1.0) <= 0.1))} / {len(every)} ({detail})",
        )
    return lines


def report(results: list[Result], load_before: float, load_after: float, quick: bool) -> str:
    lines = [
        "# Choosing the number of clusters: phase_diagram against scikit-learn sweeps",
        "",
        f"Machine: {cpu_model()}, {usable_cpus()} usable CPUs; {versions()}; "
        f"1-min load average {load_before:.2f} before, {load_after:.2f} after."
        + (" Quick run (`--quick`): four small sets only." if quick else ""),
        "",
        "Every contender picks from k = 2 .. M with M = max(10, 2 * true count), the same range "
        "for all. phase_diagram and KMeans ran once on a tiny array before timing, so numba's "
        "compile time is not counted. Sweep times are the KMeans(n_init=10) fits for every k "
        "plus the sweep's own scores (gap: plus its 10 reference sets' draws and "
        "KMeans(n_init=3) fits).",
        "",
        "## Data sets",
        "",
        *sets_table(results),
        "",
        "## Counts chosen (correct in bold)",
        "",
        *results_table(results),
        "",
        "## Summary",
        "",
        *summary_table(results),
        "",
        "Generated sets by dimension, balance and shape (recovered / sets):",
        "",
        *facets_table(results),
        "",
        "## Critical temperatures on the separated sets",
        "",
        "predicted / observed over every split of the phase diagrams. Bracketed: an earlier try "
        "closed again, observed = geometric mean of the bracket; first try: the split opened at "
        "its first try, observed is a lower bound (a ratio above 1 is expected).",
        "",
    ]
    ratios = critical_ratios(results)
    lines += [*critical_table(ratios), "", "## Targets", "", *targets(results, ratios)]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="four small sets, for testing")
    parser.add_argument("--out", help="write the report as markdown to this file")
    parser.add_argument("--only", help="only the sets whose name contains this")
    args = parser.parse_args()
    load_before = load_1min()
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    sets = data_sets(args.quick, args.only)
    if not sets:
        parser.error("no set matches")
    print("warming up (compiling) ...", file=sys.stderr, flush=True)
    warm_up()
    results = []
    for i, ds in enumerate(sets, 1):
        print(
            f"[{i}/{len(sets)}] {ds.name}: n {ds.n}, d {ds.d}, true {ds.count}, "
            f"M {max_clusters(ds.count)}",
            file=sys.stderr,
            flush=True,
        )
        results.append(run_set(ds))
    text = report(results, load_before, load_1min(), args.quick)
    print(text, end="")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as out:
            out.write(text)


if __name__ == "__main__":
    main()
