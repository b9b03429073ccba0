"""The whole default fit against scikit-learn's KMeans, set by set (issue 12).

Usage::

    python bench/fit_suite.py                      # every set, 3 repeats
    python bench/fit_suite.py --quick              # sets under 100,000 rows, 1 repeat
    python bench/fit_suite.py --sets s1,a3,digits --repeats 5 --markdown fit.md

For every set (see ``bench/sets.py``) it fits ``RBFKMeans(n_clusters=k,
random_state=0)`` (the default: entmax15 annealing, then hard Lloyd
refinement), ``KMeans(k, n_init=10, random_state=0)`` and ``KMeans(k,
n_init=1, random_state=0)`` in this process, alternating (ours, sk10, sk1,
ours, ...), and reports the median wall time of ``fit`` of each.
Compilation stays outside the timing: tiny warm-up fits in float32 and
float64 come first.

Columns:

- *ours/sk10*: median time of ours over the median time of KMeans(n_init=10);
  *target*: at most 1.0 on sets of 100,000 rows or more; on smaller ones at
  most 3, or ours at most 0.3 s, whichever allows more.
- *soft*, *hard*, *other*, *total*: the passes over the full data our fit
  made, counted by wrapping :class:`fastrbfkm._rows.InMemoryRows`
  (:class:`PassCounter`): ``stats`` at ``sigma > 0`` with a soft mode is a
  soft pass, ``stats`` otherwise and ``assign`` a hard pass, every other pass
  (moments, scatter, inertia, removal costs, farthest rows, ...) "other".
  *subset*: passes over fewer rows than the set has (a subsample, a
  coreset), as their count and, in brackets, their rows in units of full
  passes. k-means++ seeding is not a pass and is not counted.
- *inertia ours/sk10*, *ours/sk1*: ratios of the hard inertia of the fitted
  centers, all recomputed here in float64 (not the models' ``inertia_``,
  which scikit-learn accumulates in the data's dtype).
- *no center*: true clusters left without a center, ours/sk10/sk1: true
  means that are the nearest true mean of no fitted center.
- *met*: the time target, inertia at most KMeans(n_init=10)'s times
  (1 + 1e-6), no true cluster without a center on the separated sets, and on
  the 2-D benchmark sets at most 15 k soft passes.

A markdown table goes to stdout (and to ``--markdown PATH``), with a header
naming the machine, the versions, numba's threads and threading layer, and
the load before and after; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import gc
import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from machine import header, load_1min
from sets import BenchSet, choose
from sklearn.cluster import KMeans

import fastrbfkm._kernels as K
from fastrbfkm import RBFKMeans
from fastrbfkm._rows import InMemoryRows

MODELS = ("ours", "sk10", "sk1")
SEED = 0
INERTIA_SLACK = 1e-6
SOFT_PER_K = 15


def progress(message: str) -> None:
    print(f"[fit_suite] {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------ pass counting


def _kind(method: str, args: tuple, kwargs: dict) -> str:
    """``"soft"``, ``"hard"`` or ``"other"`` for one call of a pass method."""
    if method == "reduce":
        method, args = (args[0], args[1:]) if args else (kwargs.get("name"), ())
    if method == "assign":
        return "hard"
    if method != "stats":
        return "other"
    sigma = args[1] if len(args) > 1 else kwargs.get("sigma", 0.0)
    mode = args[2] if len(args) > 2 else kwargs.get("mode", K.HARD)
    return "soft" if mode != K.HARD and sigma > 0 else "hard"


@dataclass
class Passes:
    """Passes of one fit: over all ``n`` rows by kind, and over fewer rows."""

    soft: int = 0
    hard: int = 0
    other: int = 0
    subset: int = 0
    subset_rows: int = 0

    @property
    def total(self) -> int:
        """Passes over the full data."""
        return self.soft + self.hard + self.other


class PassCounter(AbstractContextManager):
    """Count the passes over the rows while the ``with`` block runs.

    Wraps the pass methods of :class:`~fastrbfkm._rows.InMemoryRows`
    (``reduce`` and ``assign``, and the named passes such as ``stats`` that
    call ``reduce``) and restores them on exit, also after an exception. A
    call made from inside another wrapped call (``stats`` calling ``reduce``)
    is the same pass and is counted once, by the outermost call. Calls on a
    source with ``n`` rows count as full passes; on fewer rows as subset
    passes.

    Parameters
    ----------
    n : int
        Rows of the full data.
    """

    METHODS = (
        "reduce",
        "assign",
        "stats",
        "scatter",
        "moments",
        "removal_costs",
        "farthest",
        "inertia",
    )

    def __init__(self, n: int):
        self.n = n
        self.passes = Passes()
        self._saved: dict[str, tuple[bool, Callable]] = {}
        self._depth = threading.local()
        self._lock = threading.Lock()

    def _record(self, rows, method: str, args: tuple, kwargs: dict) -> None:
        with self._lock:
            if rows.n == self.n:
                kind = _kind(method, args, kwargs)
                setattr(self.passes, kind, getattr(self.passes, kind) + 1)
            else:
                self.passes.subset += 1
                self.passes.subset_rows += rows.n

    def _wrap(self, method: str, original: Callable) -> Callable:
        counter = self

        def counted(rows, *args, **kwargs):
            depth = getattr(counter._depth, "value", 0)
            if depth == 0:
                counter._record(rows, method, args, kwargs)
            counter._depth.value = depth + 1
            try:
                return original(rows, *args, **kwargs)
            finally:
                counter._depth.value = depth

        counted.__name__ = getattr(original, "__name__", method)
        counted.__doc__ = getattr(original, "__doc__", None)
        return counted

    def __enter__(self) -> PassCounter:
        try:
            for method in self.METHODS:
                original = getattr(InMemoryRows, method, None)
                if original is None:
                    continue
                self._saved[method] = (method in vars(InMemoryRows), original)
                setattr(InMemoryRows, method, self._wrap(method, original))
        except BaseException:
            self._restore()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._restore()

    def _restore(self) -> None:
        for method, (own, original) in self._saved.items():
            if own:
                setattr(InMemoryRows, method, original)
            else:
                delattr(InMemoryRows, method)  # inherited: uncover the base class's
        self._saved.clear()


# ------------------------------------------------------------------ quality


def inertia64(X: np.ndarray, C: np.ndarray, budget: int = 1 << 22) -> float:
    """Hard inertia of centers C on X, in float64, by row blocks."""
    C = np.asarray(C, dtype=np.float64)
    step = max(1, budget // max(1, C.size))
    total = 0.0
    for start in range(0, X.shape[0], step):
        diff = X[start : start + step, None, :].astype(np.float64) - C[None]
        total += float(np.einsum("nkd,nkd->nk", diff, diff).min(axis=1).sum())
    return total


def without_center(C: np.ndarray, means: np.ndarray) -> int:
    """True means that are the nearest true mean of no fitted center."""
    C = np.asarray(C, dtype=np.float64)
    d2 = ((C[:, None, :] - means[None, :, :]) ** 2).sum(axis=2)
    return int(means.shape[0] - np.unique(d2.argmin(axis=1)).size)


# ------------------------------------------------------------------- fitting


def make_model(name: str, k: int):
    """A fresh, unfitted model."""
    if name == "ours":
        return RBFKMeans(n_clusters=k, random_state=SEED)
    return KMeans(n_clusters=k, n_init=10 if name == "sk10" else 1, random_state=SEED)


def warm_up() -> tuple[float, str]:
    """Compile (or load from numba's cache) what the fits use, outside the
    timing: tiny fits of ours in float32 and float64, and of KMeans. Returns
    the seconds it took and numba's threading layer."""
    import numba

    started = time.perf_counter()
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        for n in (300, 20_000):
            X = rng.standard_normal((n, 2)).astype(dtype)
            X[: n // 2] += 4.0
            RBFKMeans(4, random_state=0, max_iter=5).fit(X)
            KMeans(4, n_init=1, random_state=0).fit(X)
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "none (no parallel kernel ran)"
    return time.perf_counter() - started, layer


@dataclass
class Run:
    """One fit: wall time, float64 inertia, true clusters left without a
    center, the centers, and (ours only) the passes."""

    seconds: float
    inertia: float
    no_center: int
    centers: np.ndarray
    passes: Passes | None = None


def fit_once(name: str, X: np.ndarray, bench: BenchSet, means: np.ndarray) -> Run:
    """Fit one model on X, timing ``fit`` only (passes counted for ours)."""
    model = make_model(name, bench.k)
    counter = PassCounter(X.shape[0]) if name == "ours" else None
    gc.collect()
    with counter if counter is not None else nullcontext():
        started = time.perf_counter()
        model.fit(X)
        seconds = time.perf_counter() - started
    C = model.cluster_centers_
    return Run(
        seconds,
        inertia64(X, C),
        without_center(C, means),
        np.array(C),
        counter.passes if counter is not None else None,
    )


@dataclass
class SetResult:
    """Every run of every model on one set."""

    bench: BenchSet
    runs: dict[str, list[Run]] = field(default_factory=lambda: {m: [] for m in MODELS})

    def seconds(self, model: str) -> float:
        return float(np.median([r.seconds for r in self.runs[model]]))

    def last(self, model: str) -> Run:
        return self.runs[model][-1]


def run_set(bench: BenchSet, repeats: int) -> SetResult:
    """Generate one set and fit the models on it, alternating, ``repeats`` times."""
    progress(f"{bench.name}: making {bench.n} x {bench.d} ({np.dtype(bench.dtype).name})")
    X, means = bench.make()
    if X.shape != (bench.n, bench.d) or means.shape != (bench.k, bench.d):
        raise RuntimeError(f"{bench.name}: made {X.shape} and {means.shape} means")
    result = SetResult(bench)
    for rep in range(repeats):
        for model in MODELS:
            run = fit_once(model, X, bench, means)
            result.runs[model].append(run)
            progress(f"{bench.name}: {model} {rep + 1}/{repeats}: {run.seconds:.3f} s")
    return result


# ------------------------------------------------------------------- the table


def allowed_ratio(result: SetResult) -> float:
    """The time target as a ratio to KMeans(n_init=10)'s median time."""
    if result.bench.large:
        return 1.0
    return max(3.0, 0.3 / result.seconds("sk10"))


def misses(result: SetResult) -> list[str]:
    """The targets a set misses (empty: all met)."""
    bench, ours, sk10 = result.bench, result.last("ours"), result.last("sk10")
    missed = []
    if result.seconds("ours") / result.seconds("sk10") > allowed_ratio(result):
        missed.append("time")
    if ours.inertia > sk10.inertia * (1 + INERTIA_SLACK):
        missed.append("inertia")
    if bench.separated and ours.no_center > 0:
        missed.append("centers")
    if bench.classic and ours.passes is not None and ours.passes.soft > SOFT_PER_K * bench.k:
        missed.append("soft passes")
    return missed


def reproducibility_notes(result: SetResult) -> list[str]:
    """Notes where our repeated fits on one set did not agree exactly."""
    runs = result.runs["ours"]
    notes = []
    if any(not np.array_equal(r.centers, runs[0].centers) for r in runs[1:]):
        notes.append(f"{result.bench.name}: our centers differ between repeats (same seed)")
    if any(r.passes != runs[0].passes for r in runs[1:]):
        notes.append(f"{result.bench.name}: our pass counts differ between repeats")
    if all(r.passes is not None and r.passes.total == 0 for r in runs):
        notes.append(f"{result.bench.name}: no passes counted (not an in-memory fit?)")
    return notes


COLUMNS = (
    "set", "n", "d", "k", "dtype", "ours s", "sk10 s", "sk1 s", "ours/sk10", "target", "met",
    "soft", "hard", "other", "total", "subset", "inertia ours/sk10", "inertia ours/sk1",
    "no center ours/sk10/sk1",
)  # fmt: skip


def table_row(result: SetResult) -> list[str]:
    """One set's cells, in the order of :data:`COLUMNS`."""
    bench = result.bench
    ours, sk10, sk1 = (result.last(m) for m in MODELS)
    passes = ours.passes or Passes()
    missed = misses(result)
    return [
        bench.name,
        str(bench.n),
        str(bench.d),
        str(bench.k),
        np.dtype(bench.dtype).name,
        *(f"{result.seconds(m):.3f}" for m in MODELS),
        f"{result.seconds('ours') / result.seconds('sk10'):.2f}",
        "<= 1.0" if bench.large else "<= 3 or 0.3 s",
        "yes" if not missed else "no: " + ", ".join(missed),
        str(passes.soft),
        str(passes.hard),
        str(passes.other),
        str(passes.total),
        f"{passes.subset} ({passes.subset_rows / bench.n:.2f})",
        f"{ours.inertia / sk10.inertia:.6f}",
        f"{ours.inertia / sk1.inertia:.6f}",
        f"{ours.no_center}/{sk10.no_center}/{sk1.no_center}",
    ]


def markdown(results: list[SetResult], head: str, repeats: int) -> str:
    """The header, the table and the notes, as markdown."""
    runs = f"Times: median of {repeats} run(s) per model, models alternating; seed {SEED}."
    lines = [head, "", runs, ""]
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    lines += ["| " + " | ".join(table_row(r)) + " |" for r in results]
    notes = [note for r in results for note in reproducibility_notes(r)]
    lines += ["", *(f"- {note}" for note in notes)] if notes else []
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", help="comma-separated set names (default: all)")
    parser.add_argument(
        "--quick", action="store_true", help="only sets under 100,000 rows; 1 repeat by default"
    )
    parser.add_argument("--repeats", type=int, help="alternating runs per model (default 3)")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    try:
        args.chosen = choose(args.sets, args.quick)
    except ValueError as exc:
        parser.error(str(exc))
    if not args.chosen:
        parser.error("no set left to run (--quick keeps only sets under 100,000 rows)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_before = load_1min()
    progress("warm-up (compiling or loading numba's cache)")
    warm_seconds, layer = warm_up()
    progress(f"warm-up took {warm_seconds:.1f} s; threading layer {layer}")
    results = [run_set(bench, args.repeats) for bench in args.chosen]
    head = header(layer, load_before, load_1min()) + f" Warm-up {warm_seconds:.1f} s."
    text = markdown(results, head, args.repeats)
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
