"""Reproduce the paper's results: ``python -m fastrbfkm paper --out DIR``.

For each geometry (blobs, moons, spiral, circles) and each soft assignment
(softmax, entmax15) this measures, on the library's own functions:

- the annealing path from above the critical temperature down over many
  decades, and its limit's K-Means fixed point C* (Lloyd from the coldest
  annealed centers, to strict convergence);
- the gaps ``||C_sigma - C*||_F`` and ``|F_sigma(C_sigma) - J_KM(C*)|``
  against sigma, their convergence rates at small sigma (log-log slope for a
  power law, slope of log10 against 1/sigma for an exponential), whether the
  collapse is monotone once every center has split, and the sigma from
  which every row is hard;
- gradient descent with ``eta_k = 1 / (2 N_k)`` at sigma -> 0 against
  Lloyd's iterations from the same start;
- the Gamma bounds ``J_KM - sigma H_max W <= F_sigma <= J_KM`` at every
  recorded temperature;
- a naive softmax (no max subtraction), the stable softmax and entmax15 at
  temperatures down to 1e-300;
- the temperature where the all-at-the-mean solution becomes unstable,
  measured by the growth of a tiny perturbation under the soft step, against
  ``2 lambda_max`` (softmax) and ``2 sqrt(k) lambda_max`` (entmax15).

The results go to ``DIR/results.md``, ``DIR/results.csv`` and, when
matplotlib is installed, one PNG per geometry.
"""

from __future__ import annotations

import csv
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._deprecation import REMOVED_IN, renamed, warn
from ._rows import InMemoryRows
from ._threads import one_blas_thread
from .annealing import AnnealPath, anneal, critical_temperature
from .datasets import make_blobs, make_circles, make_moons, make_spiral
from .functional import (
    entmax15,
    gradient,
    softmax,
    squared_distances,
    step,
    sufficient_statistics,
)
from .lloyd import run_lloyd
from .seeding import kmeans_plusplus

ASSIGNMENTS = ("softmax", "entmax15")


@dataclass
class Settings:
    """What one run measures."""

    n_samples: int = 2000
    n_clusters: int = 4
    temperatures: int = 60
    decades: float = 12.0
    tol: float = 1e-20
    max_iter: int = 2000
    lloyd_steps: int = 20
    #: Seeds the data sets, the annealing and k-means++ (``seed`` before 0.2;
    #: ``Settings(seed=...)`` and ``settings.seed`` still work, with a
    #: ``FutureWarning``).
    random_state: int = 0

    @property
    def seed(self) -> int:
        """The old name of ``random_state`` (before 0.2), with a ``FutureWarning``."""
        warn(
            "Settings.seed is now called Settings.random_state; seed stops working in "
            f"{REMOVED_IN}."
        )
        return self.random_state


Settings.__init__ = renamed(seed="random_state")(Settings.__init__)


QUICK = Settings(n_samples=300, temperatures=41, decades=9.0, tol=1e-16, max_iter=400)


def geometries(settings: Settings) -> dict[str, np.ndarray]:
    """The four data sets, seeded, in float64."""
    n, seed = settings.n_samples, settings.random_state
    return {
        "blobs": make_blobs(n, centers=settings.n_clusters, cluster_std=1.0, random_state=seed)[0],
        "moons": make_moons(n, noise=0.08, random_state=seed)[0],
        "spiral": make_spiral(n, arms=2, noise=0.05, random_state=seed)[0],
        "circles": make_circles(n, factor=0.5, noise=0.05, random_state=seed)[0],
    }


@dataclass
class Run:
    """Everything measured for one geometry and one assignment."""

    dataset: str
    assignment: str
    path: AnnealPath
    C_star: np.ndarray
    J_star: float
    gap_C: np.ndarray
    gap_F: np.ndarray
    loglog_slope: float
    semilog_slope: float
    fit_range: tuple[float, float]
    better_fit: str
    monotone: bool
    monotone_violations: int
    sigma_hard: float
    bound_violations: int
    bound_worst: float
    gd_vs_lloyd: np.ndarray
    sigma_c_predicted: float
    sigma_c_measured: float
    first_split: float
    stability: dict = field(default_factory=dict)
    seconds: float = 0.0


def _fit_slopes(sigmas, gaps, all_split):
    """Slopes of log10(gap) against log10(sigma) and against 1/sigma over the
    small-sigma regime: every center split, two temperatures past the last
    split (its transient), and the gap above rounding (1e-13 of its largest)."""
    ok = all_split & (gaps > 1e-13 * max(gaps.max(), 1e-300))
    split = np.flatnonzero(all_split)
    if split.size:
        ok[: split[0] + 2] = False
    if ok.sum() < 3:
        return np.nan, np.nan, (np.nan, np.nan), "too few points"
    s, g = sigmas[ok], np.log10(gaps[ok])
    (loglog, _), power_res, *_ = np.polyfit(np.log10(s), g, 1, full=True)
    (semilog, _), exp_res, *_ = np.polyfit(1.0 / s, g, 1, full=True)
    better = "power law" if power_res.sum() <= exp_res.sum() else "exponential"
    return float(loglog), float(semilog), (float(s.min()), float(s.max())), better


def measured_critical(X, k, assignment, sigma_c, steps=8, rounds=30):
    """Bisect for the temperature where a tiny perturbation of k centers on
    the mean, along the data's principal axis, stops decaying under the soft
    Lloyd step (the linearised step multiplies it by sigma_c / sigma)."""
    mean = X.mean(axis=0)
    values, vectors = np.linalg.eigh(np.cov(X.T, bias=True))
    signs = np.where(np.arange(k) % 2 == 0, 1.0, -1.0)
    signs -= signs.mean()  # the common mode only decays
    if not signs.any():
        return np.nan  # k = 1: nothing to split
    start = mean + 1e-7 * np.sqrt(values[-1]) * signs[:, None] * vectors[:, -1][None, :]

    def growth(sigma):
        C = start.copy()
        size0 = np.linalg.norm(C - mean)
        for _ in range(steps):
            N, S, _ = sufficient_statistics(X, C, sigma, assignment)
            C = S / N[:, None]
        return np.linalg.norm(C - mean) / size0

    lo, hi = 0.25 * sigma_c, 4.0 * sigma_c
    for _ in range(rounds):
        mid = np.sqrt(lo * hi)
        if growth(mid) > 1.0:
            lo = mid
        else:
            hi = mid
    return float(np.sqrt(lo * hi))


def stability(D, sigmas):
    """Rows that are NaN or do not sum to 1, per temperature, for a naive
    softmax, the stable softmax and entmax15."""
    rows = {}
    for sigma in sigmas:
        Z = -D / sigma
        with np.errstate(all="ignore"):
            E = np.exp(Z)
            naive = E / E.sum(axis=1, keepdims=True)
        counts = []
        for R in (naive, softmax(Z), entmax15(Z)):
            bad = ~np.isfinite(R).all(axis=1) | (np.abs(R.sum(axis=1) - 1) > 1e-9)
            counts.append(int(bad.sum()))
        rows[float(sigma)] = counts
    return rows


def gd_against_lloyd(X, C0, assignment, steps, sigma):
    """Max |difference| per iteration between gradient descent with
    eta_k = 1/(2 N_k) at a tiny sigma and Lloyd's iterations from C0."""
    C_gd = C0.copy()
    C_lloyd = C0.copy()
    diffs = []
    for _ in range(steps):
        G = gradient(X, C_gd, sigma, assignment)
        N, _, _ = sufficient_statistics(X, C_gd, sigma, assignment)
        alive = N > 0
        C_gd[alive] = C_gd[alive] - G[alive] / (2.0 * N[alive, None])
        C_lloyd = step(X, C_lloyd, 0.0, "hard")  # one Lloyd iteration
        diffs.append(float(np.abs(C_gd - C_lloyd).max()))
    return np.array(diffs)


def run_one(name, X, assignment, settings: Settings) -> Run:
    started = time.perf_counter()
    k = settings.n_clusters
    sigma_c = critical_temperature(X, k, assignment)
    sigmas = 1.25 * sigma_c * np.logspace(0, -settings.decades, settings.temperatures)
    C0 = np.repeat(X.mean(axis=0)[None], k, axis=0)
    path = anneal(
        X,
        C0,
        sigmas,
        assignment,
        max_iter=settings.max_iter,
        tol=settings.tol,
        random_state=settings.random_state,
    )
    w = np.empty(0)
    star = run_lloyd(InMemoryRows(X, w), path.centers[-1], 10_000, 0.0)
    C_star, J_star = star.centers, star.inertia
    gap_C = np.linalg.norm(path.centers - C_star[None], axis=(1, 2))
    gap_F = np.abs(path.objective - J_star)
    all_split = path.n_active == k
    loglog, semilog, fit_range, better = _fit_slopes(path.sigmas, gap_C, all_split)
    after = gap_C[all_split]
    rises = np.diff(after) > 1e-12 * max(after.max(initial=0.0), 1e-300)
    hard = np.flatnonzero(
        (path.soft_fraction == 0) if assignment == "entmax15" else (path.off_winner_max <= 1e-12)
    )
    hard = hard[all_split[hard]]
    sigma_hard = float(path.sigmas[hard[0]]) if hard.size else np.nan
    h_max = np.log(k) if assignment == "softmax" else (4 / 3) * (1 - k**-0.5)
    n = X.shape[0]
    lower = path.inertia - path.sigmas * h_max * n - path.objective
    upper = path.objective - path.inertia
    slack = 1e-9 * np.abs(path.inertia)
    violations = int(((lower > slack) | (upper > slack)).sum())
    worst = float(max(lower.max(), upper.max()))
    init, _ = kmeans_plusplus(X, k, random_state=settings.random_state)
    tiny = 1e-12 * float(InMemoryRows(X, w).moments().variance.sum())
    gd = gd_against_lloyd(X, init, assignment, settings.lloyd_steps, tiny)
    measured = measured_critical(X, k, assignment, sigma_c)
    split = np.flatnonzero(path.n_active > 1)
    first_split = float(path.sigmas[split[0]]) if split.size else np.nan
    D = squared_distances(X, C_star)
    temps = [1.0, 1e-2, 1e-5, 1e-10, 1e-30, 1e-100, 1e-300]
    stab = stability(D / D.max(), temps)
    return Run(
        dataset=name,
        assignment=assignment,
        path=path,
        C_star=C_star,
        J_star=J_star,
        gap_C=gap_C,
        gap_F=gap_F,
        loglog_slope=loglog,
        semilog_slope=semilog,
        fit_range=fit_range,
        better_fit=better,
        monotone=not rises.any(),
        monotone_violations=int(rises.sum()),
        sigma_hard=sigma_hard,
        bound_violations=violations,
        bound_worst=worst,
        gd_vs_lloyd=gd,
        sigma_c_predicted=sigma_c,
        sigma_c_measured=measured,
        first_split=first_split,
        stability=stab,
        seconds=time.perf_counter() - started,
    )


def write_results(runs: list[Run], out: Path, settings: Settings) -> None:
    """``results.md`` (one table per check) and ``results.csv`` (the paths)."""
    lines = [
        "# fastrbfkm: the paper's claims, measured",
        "",
        f"Settings: n = {settings.n_samples} points per geometry, k = {settings.n_clusters}, "
        f"{settings.temperatures} temperatures from 1.25 sigma_c down {settings.decades:g} "
        f"decades, anneal tol = {settings.tol:g} (squared shift / mean variance), "
        f"max_iter = {settings.max_iter}, seed = {settings.random_state}, float64.",
        "",
        "## Convergence of the annealed centers to the K-Means fixed point C*",
        "",
        "C* is Lloyd's fixed point from the coldest annealed centers. Slopes are fitted where "
        "every center has split (from the second temperature after the last split on) and the "
        "gap is above rounding: log-log slope p of ||C_sigma - C*|| ~ sigma^p, and semilog "
        "slope c of log10 ||C_sigma - C*|| ~ c / sigma. 'better fit' names the model with the "
        "smaller residual: a power law (polynomial rate) or an exponential exp(-a / sigma).",
        "",
        "| data | assignment | J_KM(C*) | log-log slope | semilog slope | better fit | "
        "fit range of sigma | monotone after the splits | every row hard from sigma |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r.dataset} | {r.assignment} | {r.J_star:.6g} | {r.loglog_slope:.3g} | "
            f"{r.semilog_slope:.3g} | {r.better_fit} | "
            f"{r.fit_range[0]:.2g} .. {r.fit_range[1]:.2g} | "
            f"{'yes' if r.monotone else f'no ({r.monotone_violations} rises)'} | "
            f"{r.sigma_hard:.3g} |"
        )
    lines += [
        "",
        "## Gradient descent with eta_k = 1 / (2 N_k) at sigma -> 0 against Lloyd",
        "",
        f"Same k-means++ start, {settings.lloyd_steps} iterations, sigma = 1e-12 x the total "
        "variance; the largest |difference| of any coordinate over the iterations.",
        "",
        "| data | assignment | max abs difference | at iteration |",
        "|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r.dataset} | {r.assignment} | {r.gd_vs_lloyd.max():.3g} | "
            f"{int(np.argmax(r.gd_vs_lloyd)) + 1} |"
        )
    lines += [
        "",
        "## Gamma bounds J_KM - sigma H_max W <= F_sigma <= J_KM at every temperature",
        "",
        "| data | assignment | temperatures | violations | worst excess |",
        "|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r.dataset} | {r.assignment} | {len(r.path)} | {r.bound_violations} | "
            f"{r.bound_worst:.3g} |"
        )
    lines += [
        "",
        "## Low temperature: rows that are NaN or do not sum to 1",
        "",
        "Distances to C* scaled to a maximum of 1; counts for naive softmax "
        "(exp(z) / sum exp(z)) / stable softmax / entmax15.",
        "",
    ]
    temps = list(runs[0].stability)
    lines.append("| data | " + " | ".join(f"sigma={t:g}" for t in temps) + " |")
    lines.append("|---|" + "---|" * len(temps))
    for r in runs:
        if r.assignment != "softmax":
            continue
        cells = [" / ".join(str(c) for c in r.stability[t]) for t in temps]
        lines.append(f"| {r.dataset} (n={settings.n_samples}) | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Critical temperature: where k centers on the mean stop being stable",
        "",
        "Measured by bisection on the growth of a 1e-7 perturbation along the principal axis "
        "over 8 soft steps; the "
        "annealing's first temperature with two distinct centers is listed for comparison (it "
        "splits spare copies one at a time, a pair being unstable below 2 lambda_max for "
        "softmax and 2 sqrt(2) lambda_max for entmax15; see 'Critical temperatures' in "
        "the documentation's conventions page).",
        "",
        "| data | assignment | predicted | measured | measured / predicted "
        "| annealing's first split |",
        "|---|---|---|---|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r.dataset} | {r.assignment} | {r.sigma_c_predicted:.4g} | "
            f"{r.sigma_c_measured:.4g} | {r.sigma_c_measured / r.sigma_c_predicted:.4f} "
            f"| {r.first_split:.4g} |"
        )
    lines += [
        "",
        "Run time: "
        + ", ".join(f"{r.dataset}/{r.assignment} {r.seconds:.1f} s" for r in runs)
        + ".",
    ]
    (out / "results.md").write_text("\n".join(lines) + "\n")
    with open(out / "results.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(
            [
                "dataset",
                "assignment",
                "sigma",
                "gap_centers",
                "gap_objective",
                "objective",
                "inertia",
                "support_mean",
                "soft_fraction",
                "off_winner_max",
                "n_active",
                "n_iter",
                "converged",
            ]
        )
        for r in runs:
            p = r.path
            for t in range(len(p)):
                writer.writerow(
                    [
                        r.dataset,
                        r.assignment,
                        repr(float(p.sigmas[t])),
                        repr(float(r.gap_C[t])),
                        repr(float(r.gap_F[t])),
                        repr(float(p.objective[t])),
                        repr(float(p.inertia[t])),
                        repr(float(p.support_mean[t])),
                        repr(float(p.soft_fraction[t])),
                        repr(float(p.off_winner_max[t])),
                        int(p.n_active[t]),
                        int(p.n_iter[t]),
                        bool(p.converged[t]),
                    ]
                )


@one_blas_thread
def run_paper(out: str | Path, quick: bool = False, log=print) -> list[Run]:
    """Run every check, write the tables and (with matplotlib) the figures."""
    settings = QUICK if quick else Settings()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    data = geometries(settings)
    for name, X in data.items():
        for assignment in ASSIGNMENTS:
            run = run_one(name, X, assignment, settings)
            log(
                f"{name:8s} {assignment:9s} slope {run.loglog_slope:7.3g} (log-log) "
                f"{run.semilog_slope:9.3g} (semilog); hard from sigma {run.sigma_hard:.3g}; "
                f"GD vs Lloyd {run.gd_vs_lloyd.max():.2g}; bounds violated "
                f"{run.bound_violations}x; sigma_c measured/predicted "
                f"{run.sigma_c_measured / run.sigma_c_predicted:.3f} ({run.seconds:.1f} s)"
            )
            runs.append(run)
    write_results(runs, out, settings)
    try:
        from .plotting import paper_figures
    except ImportError:
        log("matplotlib is not installed: figures skipped (pip install 'fastrbfkm[plot]').")
    else:
        for name in data:
            paper_figures(
                out / f"{name}.png", name, data[name], [r for r in runs if r.dataset == name]
            )
        log(f"figures: {', '.join(f'{name}.png' for name in data)}")
    log(f"wrote {out / 'results.md'} and {out / 'results.csv'}")
    return runs
