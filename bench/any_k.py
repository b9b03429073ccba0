"""The default fit at any k, on data with more modes than centers.

Usage::

    python bench/any_k.py                         # every set, k = 16 .. 4096 (about 2 hours)
    python bench/any_k.py --quick                 # small n, k = 16 and 64 (minutes)
    python bench/any_k.py --sets aniso,china --ks 64,1024 --markdown t.md --json r.json
    python bench/any_k.py --json r.json --figure docs/figures/any_k.png   # add to, and draw

Sets (``bench/many_modes.py`` says how each is made; all seeded):

- *iso xF*, *aniso xF*, *sphere xF* (``metric="euclidean"``) and *sphere
  xF cos* (``metric="cosine"``): ``F * k`` modes for F in ``--factors``
  (default 1, 2, 4), n = ``100 k`` rows (at least 20,000, at most
  200,000), d = 32, float32, for every k of ``--ks`` (default 16, 64, 256,
  1024, 4096);
- *issue*: the many-clusters data of the annealing issue, 200,000 x 64
  float32 with 2000 anisotropic modes of Dirichlet-mixed sizes, at k = 1024
  (and at the ks of ``--issue-ks``);
- *china*, *flower*: scikit-learn's sample photographs as 273,280 RGB rows
  in [0, 1], k = 16, 64, 256 (``--photo-ks``);
- *topics*: a 20,000 x 20,000 TF-IDF-like CSR matrix with ``2 k`` topics,
  k = 16, 64, 256 (``--text-ks``).

Models, fitted one after the other in this process on the same data (the
kernels compiled by a warm-up first, outside the timing):

- *ours*: ``RBFKMeans(k, random_state=0)`` (with ``metric="cosine"`` on the
  *cos* sets), the default fit;
- *sk1*: ``sklearn.cluster.KMeans(k, n_init=1, random_state=s)`` for the
  seeds s = 0, 1, 2 (``--sk1-seeds``), fewer where three would take over
  ``--sk10-limit`` seconds: one run of k-means++ and Lloyd is a draw, and a
  lucky seed can be 1% below the others (``flower`` at k = 64: seed 0 is
  1.05-1.45% below seeds 1-5), so the reference is the mean inertia of
  the seeds run, and its time their median;
- *sk10*: ``KMeans(k, n_init=10, random_state=0)``, where 10 times sk1's
  time is under ``--sk10-limit`` seconds (default 300).

On the *cos* sets scikit-learn fits the unit rows and its centers are
scaled to unit length before measuring (spherical K-Means as a user of
``KMeans`` gets it). Every inertia is recomputed here in float64 at the
fitted centers: squared distances, or cosine distances ``1 - x.c`` on the
*cos* sets. The table gives the time and inertia of each model over sk1's
and sk10's; a closing line gives the mean inertia ratio over the sets and
the cases that miss the issue's targets. ``--json`` keeps every result
(runs already in the file are not run again), ``--figure`` draws the
inertia over sk1's against k, a line per set.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from machine import header, load_1min
from many_modes import gaussian_modes, photo, sphere_modes, topic_tfidf
from sklearn.cluster import KMeans

from fastrbfkm import RBFKMeans

SEED = 0
DEFAULT_KS = (16, 64, 256, 1024, 4096)
QUICK_KS = (16, 64)
MATRIX_BYTES = 1 << 27


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One set at one k."""

    family: str  # iso, aniso, sphere, issue, china, flower, topics
    k: int
    factor: int = 0  # modes per center (generated sets)
    cosine: bool = False
    n: int = 0
    d: int = 0

    @property
    def set_name(self) -> str:
        name = self.family if not self.factor else f"{self.family} x{self.factor}"
        return name + (" cos" if self.cosine else "")

    @property
    def key(self) -> str:
        return f"{self.set_name} n{self.n} d{self.d} k{self.k}"


def rows_for(k: int, quick: bool) -> int:
    return int(min(max(100 * k, 4_000 if quick else 20_000), 20_000 if quick else 200_000))


def cases(args) -> list[Case]:
    chosen = set(args.sets.split(",")) if args.sets else None
    out: list[Case] = []

    def want(family: str) -> bool:
        return chosen is None or family in chosen

    d = 16 if args.quick else 32
    for k in args.ks:
        for factor in args.factors:
            n = rows_for(k, args.quick)
            if factor * k > n // 4:
                continue  # fewer than 4 rows a mode is not a mode
            for family in ("iso", "aniso", "sphere"):
                if want(family):
                    out.append(Case(family, k, factor, n=n, d=d))
            if want("sphere"):
                out.append(Case("sphere", k, factor, cosine=True, n=n, d=d))
    if want("issue") and not args.quick:
        out += [Case("issue", k, n=200_000, d=64) for k in args.issue_ks]
    for name in ("china", "flower"):
        if want(name):
            out += [Case(name, k, n=273_280, d=3) for k in args.photo_ks]
    if want("topics"):
        n = 4_000 if args.quick else 20_000
        out += [Case("topics", k, n=n, d=n) for k in args.text_ks]
    return out


_CACHE: dict = {}


def make_data(case: Case):
    """The case's rows (made once per shape and mode count)."""
    if case.family in ("china", "flower"):
        key = (case.family,)
    elif case.family == "topics":
        key = ("topics", case.n, case.k)
    elif case.family == "issue":
        key = ("issue",)
    else:
        key = (case.family, case.n, case.d, case.factor * case.k)
    if key not in _CACHE:
        _CACHE.clear()
        gc.collect()
        if case.family in ("china", "flower"):
            X = photo(case.family)
        elif case.family == "topics":
            X = topic_tfidf(case.n, case.d, 2 * case.k)
        elif case.family == "issue":
            X = gaussian_modes(200_000, 64, 2000, anisotropic=True)
        elif case.family == "sphere":
            X = sphere_modes(case.n, case.d, case.factor * case.k)
        else:
            X = gaussian_modes(
                case.n, case.d, case.factor * case.k, anisotropic=case.family == "aniso"
            )
        _CACHE[key] = X
    return _CACHE[key]


# ------------------------------------------------------------------ fitting


def inertia64(X, C: np.ndarray, cosine: bool) -> float:
    """Hard inertia of centers C on X in float64 (cosine distances ``1 - x.c``
    with C at unit length when ``cosine``), by row blocks."""
    C = np.asarray(C, dtype=np.float64)
    if cosine:
        C = C / np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-300)
    c2 = np.einsum("kd,kd->k", C, C)
    step = max(1, MATRIX_BYTES // (8 * C.shape[0]))
    total = 0.0
    for start in range(0, X.shape[0], step):
        block = X[start : start + step].astype(np.float64)
        dense = isinstance(block, np.ndarray)
        if cosine:
            norms = np.sqrt(
                np.einsum("nd,nd->n", block, block)
                if dense
                else np.asarray(block.multiply(block).sum(axis=1)).ravel()
            )
            dots = np.asarray(block @ C.T) / np.maximum(norms, 1e-300)[:, None]
            total += float((1.0 - dots.max(axis=1)).sum())
            continue
        x2 = (
            np.einsum("nd,nd->n", block, block)
            if dense
            else np.asarray(block.multiply(block).sum(axis=1)).ravel()
        )
        d2 = np.asarray(block @ C.T)
        d2 *= -2.0
        d2 += c2
        d2 += x2[:, None]
        total += float(np.maximum(d2.min(axis=1), 0.0).sum())
    return total


@dataclass
class Run:
    seconds: float
    inertia: float


def fit_once(model: str, case: Case, X, seed: int = SEED) -> Run:
    gc.collect()
    if model == "ours":
        est = RBFKMeans(case.k, random_state=seed, metric="cosine" if case.cosine else "euclidean")
    else:
        est = KMeans(case.k, n_init=10 if model == "sk10" else 1, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        started = time.perf_counter()
        est.fit(X)
        seconds = time.perf_counter() - started
    return Run(seconds, inertia64(X, est.cluster_centers_, case.cosine))


def warm_up() -> None:
    """Compile (or load) the kernels the fits use, outside the timing."""
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        X = rng.standard_normal((3_000, 8)).astype(dtype)
        for k in (4, 200):
            RBFKMeans(k, random_state=0).fit(X)
        RBFKMeans(4, random_state=0, metric="cosine").fit(X)
    RBFKMeans(4, random_state=0).fit(topic_tfidf(2_000, 500, 8))
    KMeans(4, n_init=1, random_state=0).fit(X)


def run_case(case: Case, results: dict, sk10_limit: float, sk1_seeds: int) -> dict:
    X = make_data(case)
    entry = results.get(case.key, {})
    for model in ("ours", "sk1", "sk10"):
        if model in entry:
            continue
        if model == "sk10" and 10 * entry["sk1"]["seconds"] > sk10_limit:
            entry["sk10"] = None
            continue
        run = fit_once(model, case, X)
        progress(f"{case.key}: {model} {run.seconds:.2f} s, inertia {run.inertia:.6g}")
        if model == "sk1":
            runs = [run]
            for seed in range(1, sk1_seeds):
                if (seed + 1) * run.seconds > sk10_limit:
                    break
                runs.append(fit_once(model, case, X, seed))
                progress(
                    f"{case.key}: sk1 seed {seed} {runs[-1].seconds:.2f} s, "
                    f"inertia {runs[-1].inertia:.6g}"
                )
            inertias = [r.inertia for r in runs]
            entry["sk1_runs"] = inertias
            run = Run(float(np.median([r.seconds for r in runs])), float(np.mean(inertias)))
        entry[model] = asdict(run)
    entry["case"] = asdict(case)
    results[case.key] = entry
    return entry


# ------------------------------------------------------------------- tables


def ratio(a, b, digits: int = 4) -> str:
    return "-" if a is None or b is None else f"{a / b:.{digits}f}"


def spread(entry: dict) -> str:
    """How many sk1 seeds ran and how far their inertias spread (max / min)."""
    runs = entry.get("sk1_runs") or [entry["sk1"]["inertia"]]
    if len(runs) == 1:
        return "1"
    return f"{len(runs)} ({max(runs) / min(runs) - 1:.2%})"


def markdown(results: dict, keys: list[str], head: str) -> str:
    lines = [
        head,
        "",
        "| set | n | d | k | ours s | sk1 s | sk10 s | time / sk1 | time / sk10 "
        "| inertia / sk1 | sk1 seeds (spread) | inertia / sk10 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    misses, ratios = [], {}
    for key in keys:
        e = results[key]
        c = Case(**e["case"])
        ours, sk1, sk10 = e["ours"], e["sk1"], e.get("sk10")
        t10 = sk10["seconds"] if sk10 else None
        i10 = sk10["inertia"] if sk10 else None
        lines.append(
            f"| {c.set_name} | {c.n} | {c.d} | {c.k} | {ours['seconds']:.2f} | "
            f"{sk1['seconds']:.2f} | {'-' if t10 is None else f'{t10:.2f}'} | "
            f"{ratio(ours['seconds'], sk1['seconds'], 2)} | {ratio(ours['seconds'], t10, 2)} | "
            f"{ratio(ours['inertia'], sk1['inertia'])} | {spread(e)} | "
            f"{ratio(ours['inertia'], i10)} |"
        )
        r = ours["inertia"] / sk1["inertia"]
        ratios.setdefault(c.set_name, []).append(r)
        t = ours["seconds"] / sk1["seconds"]
        if r > 1.0:
            misses.append(f"{c.set_name} k={c.k}: inertia {r:.4f} of sk1")
        if t10 is not None and ours["seconds"] > t10:
            misses.append(f"{c.set_name} k={c.k}: time {ours['seconds'] / t10:.2f}x sk10")
        if (c.k >= 512 and t > 0.5) or (c.k >= 256 and t > 1.0):
            misses.append(f"{c.set_name} k={c.k}: time {t:.2f}x sk1")
    per_set = [float(np.mean(v)) for v in ratios.values()]
    lines += [
        "",
        f"Mean inertia / sk1 over the {len(per_set)} sets (each set's mean over its ks): "
        f"{np.mean(per_set):.4f}; over all {len(keys)} cases: "
        f"{np.mean([r for v in ratios.values() for r in v]):.4f}.",
        "",
        "Targets missed: " + ("; ".join(misses) if misses else "none") + ".",
    ]
    return "\n".join(lines)


def figure(results: dict, keys: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, list[tuple[int, float]]] = {}
    for key in keys:
        e = results[key]
        c = Case(**e["case"])
        series.setdefault(c.set_name, []).append((c.k, e["ours"]["inertia"] / e["sk1"]["inertia"]))
    fig, ax = plt.subplots(figsize=(8, 5))
    colours = plt.get_cmap("tab20").colors
    for i, (name, points) in enumerate(sorted(series.items())):
        points.sort()
        ks, rs = zip(*points, strict=True)
        style = "--" if " x4" in name else "-"  # more modes than centers by 4: dashed
        alone = len(points) == 1  # one k: a larger square, drawn on top
        ax.plot(
            ks,
            rs,
            style,
            marker="s" if alone else "o",
            markersize=9 if alone else 6,
            zorder=3 if alone else 2,
            color=colours[i % len(colours)],
            label=name,
        )
    ax.axhline(1.0, color="black", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k")
    ax.set_ylabel("inertia / KMeans(n_init=1)")
    ax.set_title("RBFKMeans() against KMeans(n_init=1), data with more modes than centers")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    progress(f"figure written to {path}")


# -------------------------------------------------------------------- main


def int_list(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(",") if v)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small n, k = 16 and 64")
    p.add_argument("--sets", help="comma-separated families (iso,aniso,sphere,issue,...)")
    p.add_argument("--ks", type=int_list)
    p.add_argument("--factors", type=int_list, default=(1, 2, 4))
    p.add_argument("--issue-ks", type=int_list, default=(1024,))
    p.add_argument("--photo-ks", type=int_list, default=(16, 64, 256))
    p.add_argument("--text-ks", type=int_list)
    p.add_argument("--sk10-limit", type=float, default=300.0)
    p.add_argument("--sk1-seeds", type=int, default=3)
    p.add_argument("--markdown", type=Path)
    p.add_argument("--json", type=Path, help="results file: read, extended, written")
    p.add_argument("--figure", type=Path)
    args = p.parse_args(argv)
    if args.ks is None:
        args.ks = QUICK_KS if args.quick else DEFAULT_KS
    if args.text_ks is None:
        args.text_ks = (16,) if args.quick else (16, 64, 256)
    if args.quick:
        args.photo_ks = tuple(k for k in args.photo_ks if k <= 64)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    results = json.loads(args.json.read_text()) if args.json and args.json.exists() else {}
    import numba

    before = load_1min()
    warm_up()
    todo = cases(args)
    for i, case in enumerate(todo, 1):
        progress(f"case {i}/{len(todo)}: {case.key}")
        run_case(case, results, args.sk10_limit, args.sk1_seeds)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    keys = [c.key for c in todo]
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "none"
    text = markdown(results, keys, header(layer, before, load_1min()))
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    if args.figure:
        figure(results, keys, args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
