"""Why the annealing lost to k-means++ at large k, and what the gain-ordered
splits change: the default fit's annealing, temperature by temperature.

Usage::

    python bench/anneal_diagnosis.py                  # k = 64, 256, 1024 (about 15 minutes)
    python bench/anneal_diagnosis.py --ks 256 --figure docs/figures/annealing_path.png

Data: the many-clusters set of the annealing-at-any-k issue
(``bench/many_modes.py``: 200,000 x 64 float32, 2000 anisotropic modes of
Dirichlet-mixed sizes). For every k the annealing runs as
``RBFKMeans(k, random_state=0)`` runs it (entmax15 from the weighted mean
just above the critical temperature, on its ``anneal_size`` sample, a few
soft steps a temperature, skipping idle ones, down to hard rows), twice:
with every unstable center splitting at once (``gain_ratio=0``, the fit
before the gain-ordered splits) and with the default ``gain_ratio``.
Recorded per temperature: the active centers, the splits tried, closed and
merged, the inertia of the path's centers on every row over that of
``KMeans(k, n_init=1, random_state=0)``; per split, its predicted critical
temperature over the temperature it split at. The figure draws the inertia
ratio against sigma, a line per k and rule. Per k and rule, the table
also says how the centers ended up over the 2000 modes: the share of the
heaviest quarter of the modes left sharing their nearest center with
another mode, and the share of the centers that sit in a mode another
center holds too (the nearest center of no mode's mean).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
from machine import header, load_1min
from many_modes import gaussian_modes
from sklearn.cluster import KMeans

import fastrbfkm._kernels as K
from fastrbfkm import RBFKMeans
from fastrbfkm._axes import largest_variance
from fastrbfkm._backend import open_rows
from fastrbfkm._rows import annealing_sample
from fastrbfkm._tunables import SPLIT_GAIN_RATIO
from fastrbfkm.annealing import (
    AnnealPlan,
    AnnealSettings,
    SplitLog,
    critical_from_variance,
    run_anneal,
)


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def anneal_as_the_fit_does(X, rows, k: int, gain_ratio: float):
    """The default fit's annealing on its sample, with a split log."""
    est = RBFKMeans(k, random_state=0)
    rng = np.random.default_rng(np.random.RandomState(0).randint(np.iinfo(np.int32).max))
    moments = rows.moments()
    sigma_c = critical_from_variance(largest_variance(rows, moments), k, K.ENTMAX15)
    m = est._anneal_rows(k)
    guide = annealing_sample(rows, m, int(rng.integers(2**63))) if rows.n > m else rows
    plan = AnnealPlan.for_estimator("auto", None, 0.8, sigma_c, rows.dtype, True, 3, 300)
    plan = replace(plan, gain_ratio=gain_ratio)
    tol = float(rows.moments(weighted=False).variance.sum()) / rows.d * 1e-4
    scale2 = float(moments.variance.sum()) / rows.d
    C = np.repeat(moments.mean[None, :], k, axis=0).astype(rows.dtype)
    log = SplitLog()
    started = time.perf_counter()
    path = run_anneal(guide, C, K.ENTMAX15, AnnealSettings(plan, tol, scale2, False), rng, log=log)
    seconds = time.perf_counter() - started
    inertia = np.array([rows.inertia(np.ascontiguousarray(c))[0] for c in path.centers])
    return sigma_c, path, log, inertia, seconds


def sharing(X, modes: np.ndarray, C: np.ndarray) -> tuple[float, float]:
    """Of the heaviest quarter of the modes (by rows), the share whose rows'
    mean is nearest a center that is also nearest another mode's mean; and
    the share of the centers nearest no mode's mean at all (a mode split in
    several)."""
    counts = np.bincount(modes)
    present = np.flatnonzero(counts)
    means = np.stack([X[modes == m].mean(axis=0) for m in present]).astype(np.float64)
    C = np.asarray(C, dtype=np.float64)
    d2 = (means**2).sum(1)[:, None] - 2 * means @ C.T + (C**2).sum(1)[None, :]
    nearest = d2.argmin(axis=1)
    per_center = np.bincount(nearest, minlength=C.shape[0])
    heavy = counts[present] >= np.quantile(counts[present], 0.75)
    shared = per_center[nearest[heavy]] >= 2
    return float(shared.mean()), float((per_center == 0).mean())


def summary(k, rule, sigma_c, path, log, ratio, seconds, share) -> list[str]:
    T = len(path.sigmas)
    splits = [e for e in log.events if e[0] == "split"]
    per_t = np.bincount([e[1] for e in splits], minlength=T)
    closes = sum(e[0] == "close" for e in log.events)
    merges = sum(e[0] == "merge" for e in log.events)
    over = np.array([e[5] / e[2] for e in splits]) if splits else np.ones(1)
    first = next((t for t in range(T) if path.n_active[t] > 1), T - 1)
    out = [
        f"| {k} | {rule} | {sigma_c:.3g} | {path.sigmas[first]:.3g} | {T} | {len(splits)} | "
        f"{closes} | {merges} | {int(per_t.max())} | "
        f"{np.median(over):.2f} ({np.quantile(over, 0.9):.1f}) | "
        f"{share[0]:.2f} | {share[1]:.2f} | {ratio[-1]:.4f} | {seconds:.1f} |"
    ]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ks", default="64,256,1024")
    p.add_argument("--figure", type=Path)
    p.add_argument("--per-temperature", action="store_true", help="print every temperature")
    args = p.parse_args(argv)
    ks = [int(v) for v in args.ks.split(",")]
    before = load_1min()
    X, modes = gaussian_modes(200_000, 64, 2000, anisotropic=True, return_labels=True)
    rows = open_rows(X, None, "cpu", fit=True)
    RBFKMeans(4, random_state=0).fit(X[:3000])  # compile outside the timing
    table = [
        "| k | splits | sigma_c | first split at | temperatures | splits tried | closed "
        "| merged | most splits at one temperature | predicted / actual split temperature, "
        "median (90%) | heaviest modes sharing a center | centers in a split mode "
        "| annealed inertia / sk1 | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    curves = []
    detail = []
    for k in ks:
        ref = KMeans(k, n_init=1, random_state=0).fit(X).inertia_
        progress(f"k={k}: KMeans(n_init=1) inertia {ref:.6g}")
        for rule, ratio in (("all at once", 0.0), (f"gain >= {SPLIT_GAIN_RATIO} x best", None)):
            gain_ratio = SPLIT_GAIN_RATIO if ratio is None else ratio
            sigma_c, path, log, inertia, seconds = anneal_as_the_fit_does(X, rows, k, gain_ratio)
            r = inertia / ref
            share = sharing(X, modes, path.centers[-1])
            table += summary(k, rule, sigma_c, path, log, r, seconds, share)
            curves.append((k, rule, path.sigmas, r))
            progress(f"k={k} {rule}: {len(path.sigmas)} temperatures, annealed {r[-1]:.4f}")
            if args.per_temperature:
                detail.append(f"\nk = {k}, {rule}: sigma, active centers, inertia / sk1")
                detail += [
                    f"{s:10.4g} {a:6d} {v:8.4f}"
                    for s, a, v in zip(path.sigmas, path.n_active, r, strict=True)
                ]
    print(header("omp", before, load_1min()))
    print()
    print("\n".join(table + detail))
    if args.figure:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 5))
        for k, rule, sigmas, r in curves:
            style = "--" if rule == "all at once" else "-"
            ax.plot(sigmas, r, style, marker=".", label=f"k = {k}, {rule}")
        ax.axhline(1.0, color="black", linewidth=1, label="KMeans(n_init=1)")
        ax.set_xscale("log")
        ax.set_ylim(0.98, 1.6)
        ax.invert_xaxis()
        ax.set_xlabel("sigma (cooling from left to right)")
        ax.set_ylabel("inertia on every row / KMeans(n_init=1)")
        ax.set_title("The annealing path, 200000 x 64 rows of 2000 modes")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.figure, dpi=110)
        progress(f"figure written to {args.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
