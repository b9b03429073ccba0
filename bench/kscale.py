"""Whole fits as the number of clusters k grows, at fixed n and d.

Usage::

    python bench/kscale.py                          # k = 32 .. 2048 dense, 64 and 256 sparse
    python bench/kscale.py --quick                  # n 20,000, d 16, k = 16, 64, 256
    python bench/kscale.py --ks 128,512 --models ours,hard,sk1 --repeats 3 --markdown k.md
    python bench/kscale.py --no-sparse --sk10-limit 60 --max-seconds 600

Cases:

- *dense*: ``fastrbfkm.datasets.make_blobs(n, centers=4 * k, n_features=d,
  random_state=0, dtype=np.float32)`` for every k of ``--ks`` (default
  32,128,512,1024,2048; n = ``--n``, default 200,000; d = ``--d``, default
  64: the same n and d for every k).
- *sparse*: the TF-IDF-like CSR matrix of ``bench/sparse.py``
  (:func:`sparse.tfidf_like`, float64; ``--sparse-n`` x ``--sparse-d``,
  default 100,000 x 50,000) for every k of ``--sparse-ks`` (default 64,256);
  ``--no-sparse`` skips them. ``--quick`` makes them 10,000 x 5,000 at
  k = 16 unless given.

Models (``--models``, comma-separated; default all), each fitted in this
process, alternating model by model within a case (ours, hard, sk1, sk10,
elkan, faiss, then the next repeat); compilation stays outside the timing
(tiny warm-up fits of ours and hard on float32, float64 and CSR data first):

- *ours*: ``RBFKMeans(k, random_state=0)``, the default annealed fit;
- *hard*: ``RBFKMeans(k, assignment="hard", random_state=0)``;
- *sk1*: ``sklearn.cluster.KMeans(k, n_init=1, random_state=0)``;
- *sk10*: ``KMeans(k, n_init=10, random_state=0)``, only where 10 times the
  case's first sk1 time is under ``--sk10-limit`` seconds (default 300),
  "skipped (est. N s)" otherwise (choosing sk10 measures sk1 too);
- *elkan*: ``KMeans(k, n_init=1, algorithm="elkan", random_state=0)``, dense
  cases only;
- *faiss*: ``faiss.Kmeans(d, k, niter=25, seed=0, max_points_per_centroid=n
  // k + 1)`` trained on every row, dense cases only (left out, with a note,
  where faiss does not import).

``--repeats`` (default 1) runs per model and case; a model whose first run
on a case took over ``--max-seconds`` (default 1200) is not repeated there.

Columns of the first table (one row per case and model):

- *fit s*: median wall time of ``fit`` (faiss: ``train``); *runs*: runs behind it.
- *iters*: Lloyd iterations, ``n_iter_`` (sk10: the kept init's; faiss: niter).
- *inertia / sk1*, *inertia / sk10*: the hard inertia of the model's fitted
  centers over sk1's and sk10's, all recomputed here in float64 by row
  blocks as ``||x||^2 - 2 x.c + ||c||^2`` (no block of distances over
  128 MiB; scipy.sparse products for CSR), not the models' ``inertia_``.
- *time / sk1*, *time / sk10*, *time / faiss*: median times over theirs.
- *pruned* (ours and hard): the share of row-center distance evaluations
  the fit avoided, ``1 - evaluated / (rows x centers)`` summed over its hard
  passes, counted by wrapping ``InMemoryRows.pruned_stats`` (a pruned hard
  pass; the last item of what it returns is the evaluations it made) and
  ``InMemoryRows.stats`` at ``sigma == 0`` or hard mode (an unpruned pass:
  rows x centers evaluations); in brackets, pruned passes / all hard passes.
  Other passes (``assign``, the soft passes, k-means++) are not counted.
  "n/a" where the library has no ``pruned_stats``.

A second table gives the named ratios per case (ours/sk1, hard/sk1,
hard/faiss, ours/sk10), a third the growth exponent of each model's time in
k on the dense cases: the least-squares slope of log time against log k over
every k measured, and over the ks from 128 up where there are at least two.

The tables go to stdout as markdown (and to ``--markdown PATH``), after a
header naming the machine, the versions, numba's threads and threading
layer, and the load before and after; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from machine import header, load_1min
from sklearn.cluster import KMeans
from sparse import tfidf_like

import fastrbfkm._kernels as K
import fastrbfkm._rows
from fastrbfkm import RBFKMeans
from fastrbfkm._rows import InMemoryRows
from fastrbfkm.datasets import make_blobs

#: The base of the rows sources in memory, dense and CSR (before 2026-12,
#: the dense source, of which the CSR source was a subclass).
IN_MEMORY = getattr(fastrbfkm._rows, "ArrayRows", InMemoryRows)

MODELS = ("ours", "hard", "sk1", "sk10", "elkan", "faiss")
OURS = ("ours", "hard")
DENSE_ONLY = ("elkan", "faiss")
SEED = 0
FAISS_NITER = 25
MATRIX_BYTES = 1 << 27  # the largest block of float64 distances inertia64 forms
GROWTH_FROM = 128
DEFAULT_KS = (32, 128, 512, 1024, 2048)
QUICK_KS = (16, 64, 256)


def progress(message: str) -> None:
    print(f"[kscale] {message}", file=sys.stderr, flush=True)


def load_faiss():
    """The faiss module, or None where it does not import."""
    try:
        import faiss
    except ImportError:
        return None
    return faiss


# ------------------------------------------------------- distance counting


@dataclass
class Pruning:
    """Row-center distance evaluations of one fit's hard passes."""

    evaluated: int = 0
    possible: int = 0
    pruned_calls: int = 0
    calls: int = 0

    @property
    def avoided(self) -> float:
        """Share of the possible evaluations not made (NaN without passes)."""
        return 1.0 - self.evaluated / self.possible if self.possible else float("nan")


def _is_hard(args: tuple, kwargs: dict) -> bool:
    """Whether a ``stats(C, sigma, mode, ...)`` call is a hard pass."""
    sigma = args[1] if len(args) > 1 else kwargs.get("sigma", 0.0)
    mode = args[2] if len(args) > 2 else kwargs.get("mode", K.HARD)
    return sigma == 0 or mode == K.HARD


class DistanceCounter(AbstractContextManager):
    """Count the distance evaluations of the hard passes while the ``with``
    block runs.

    Wraps ``pruned_stats`` (where the library has it) and ``stats`` of
    the in-memory sources (:data:`IN_MEMORY` and its subclasses that define
    their own), and restores them on exit, also after an exception. A
    ``pruned_stats`` call counts its reported evaluations (the last item it
    returns) against ``rows.n * C.shape[0]``; a hard ``stats`` call counts
    ``rows.n * C.shape[0]`` of both, unless a ``pruned_stats`` call ran
    inside it (then that one counts). A call made from inside another
    wrapped call of the same kind is the same pass and is counted once, by
    the outermost.
    """

    METHODS = ("pruned_stats", "stats")

    def __init__(self):
        self.available = getattr(InMemoryRows, "pruned_stats", None) is not None
        self.pruning = Pruning()
        self._saved: list[tuple[type, str, bool, Callable]] = []
        self._local = threading.local()
        self._lock = threading.Lock()

    def _add(self, possible: int, evaluated: int, pruned: bool) -> None:
        with self._lock:
            self.pruning.possible += possible
            self.pruning.evaluated += evaluated
            self.pruning.calls += 1
            self.pruning.pruned_calls += int(pruned)

    def _wrap(self, method: str, original: Callable) -> Callable:
        counter, is_pruned = self, method == "pruned_stats"

        def counted(rows, *args, **kwargs):
            local = counter._local
            depth = getattr(local, "depth", 0)
            pruned_depth = getattr(local, "pruned_depth", 0)
            if depth == 0:
                local.pruned_seen = False
            local.depth = depth + 1
            local.pruned_depth = pruned_depth + is_pruned
            try:
                result = original(rows, *args, **kwargs)
            finally:
                local.depth, local.pruned_depth = depth, pruned_depth
            C = args[0] if args else kwargs["C"]
            possible = int(rows.n) * int(np.shape(C)[0])
            if is_pruned and pruned_depth == 0:
                local.pruned_seen = True
                counter._add(possible, int(result[-1]), pruned=True)
            elif not is_pruned and depth == 0 and not local.pruned_seen:
                if _is_hard(args, kwargs):
                    counter._add(possible, possible, pruned=False)
            return result

        counted.__name__ = getattr(original, "__name__", method)
        counted.__doc__ = getattr(original, "__doc__", None)
        return counted

    @staticmethod
    def _classes() -> list[type]:
        found, todo = [], [IN_MEMORY]
        while todo:
            cls = todo.pop()
            if cls not in found:
                found.append(cls)
                todo.extend(cls.__subclasses__())
        return found

    def __enter__(self) -> DistanceCounter:
        try:
            for cls in self._classes():
                for method in self.METHODS:
                    own = method in vars(cls)
                    if not own and cls is not IN_MEMORY:
                        continue  # inherits the wrapped one
                    original = getattr(cls, method, None)
                    if original is None:
                        continue
                    self._saved.append((cls, method, own, original))
                    setattr(cls, method, self._wrap(method, original))
        except BaseException:
            self._restore()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._restore()

    def _restore(self) -> None:
        for cls, method, own, original in reversed(self._saved):
            if own:
                setattr(cls, method, original)
            else:
                delattr(cls, method)  # inherited: uncover the base class's
        self._saved.clear()


# ------------------------------------------------------------------ quality


def inertia64(X, C: np.ndarray, budget: int = MATRIX_BYTES) -> float:
    """Hard inertia of centers C on X (dense or scipy CSR), in float64, by row
    blocks of at most ``budget`` bytes of distances."""
    C = np.asarray(C, dtype=np.float64)
    c2 = np.einsum("kd,kd->k", C, C)
    step = max(1, budget // (8 * C.shape[0]))
    total = 0.0
    for start in range(0, X.shape[0], step):
        block = X[start : start + step].astype(np.float64)
        if isinstance(block, np.ndarray):
            x2 = np.einsum("nd,nd->n", block, block)
        else:
            x2 = np.asarray(block.multiply(block).sum(axis=1)).ravel()
        d2 = np.asarray(block @ C.T)
        d2 *= -2.0
        d2 += c2
        d2 += x2[:, None]
        total += float(np.maximum(d2.min(axis=1), 0.0).sum())
    return total


# -------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    """One data set and k."""

    sparse: bool
    n: int
    d: int
    k: int

    @property
    def name(self) -> str:
        return "tfidf csr f64" if self.sparse else "blobs f32"

    @property
    def label(self) -> str:
        return f"{self.name} {self.n} x {self.d}, k {self.k}"


def make_data(case: Case, cache: dict):
    """The case's data (the sparse matrix made once for all its ks)."""
    if not case.sparse:
        X, _ = make_blobs(
            case.n, centers=4 * case.k, n_features=case.d, random_state=SEED, dtype=np.float32
        )
        return X
    key = (case.n, case.d)
    if key not in cache:
        cache.clear()
        cache[key] = tfidf_like(case.n, case.d)
    return cache[key]


# ------------------------------------------------------------------- fitting


def make_model(name: str, k: int):
    """A fresh, unfitted model (not faiss's)."""
    if name == "ours":
        return RBFKMeans(k, random_state=SEED)
    if name == "hard":
        return RBFKMeans(k, assignment="hard", random_state=SEED)
    if name == "elkan":
        return KMeans(k, n_init=1, algorithm="elkan", random_state=SEED)
    return KMeans(k, n_init=10 if name == "sk10" else 1, random_state=SEED)


@dataclass
class Run:
    """One fit: wall time, Lloyd iterations, float64 inertia and (ours only)
    the distance evaluations."""

    seconds: float
    iters: int
    inertia: float
    pruning: Pruning | None = None


def fit_once(name: str, X, k: int, faiss) -> Run:
    """Fit one model on X, timing ``fit`` (faiss: ``train``) only."""
    counter = DistanceCounter() if name in OURS else None
    gc.collect()
    if name == "faiss":
        n, d = X.shape
        X = np.ascontiguousarray(X, dtype=np.float32)
        model = faiss.Kmeans(d, k, niter=FAISS_NITER, seed=SEED, max_points_per_centroid=n // k + 1)
        started = time.perf_counter()
        model.train(X)
        seconds = time.perf_counter() - started
        centers, iters = model.centroids, FAISS_NITER
    else:
        model = make_model(name, k)
        with counter if counter is not None else nullcontext():
            started = time.perf_counter()
            model.fit(X)
            seconds = time.perf_counter() - started
        centers, iters = model.cluster_centers_, int(model.n_iter_)
    pruning = counter.pruning if counter is not None and counter.available else None
    return Run(seconds, iters, inertia64(X, centers), pruning)


@dataclass
class Outcome:
    """Every run of one model on one case, or why it has none."""

    runs: list[Run] = field(default_factory=list)
    skipped: str | None = None
    capped: bool = False

    @property
    def seconds(self) -> float | None:
        return statistics.median(r.seconds for r in self.runs) if self.runs else None


@dataclass
class CaseResult:
    case: Case
    outcomes: dict[str, Outcome]

    def seconds(self, model: str) -> float | None:
        outcome = self.outcomes.get(model)
        return outcome.seconds if outcome is not None else None

    def inertia(self, model: str) -> float | None:
        outcome = self.outcomes.get(model)
        return outcome.runs[-1].inertia if outcome is not None and outcome.runs else None


def run_case(case: Case, X, models: list[str], args, faiss) -> CaseResult:
    """Fit the case's models on X, alternating, ``args.repeats`` times."""
    models = [m for m in models if not (case.sparse and m in DENSE_ONLY)]
    outcomes = {m: Outcome() for m in models}
    for rep in range(args.repeats):
        for model in models:
            outcome = outcomes[model]
            if outcome.skipped is not None or outcome.capped:
                continue
            if rep == 0 and model == "sk10":
                sk1 = outcomes["sk1"].runs
                if not sk1:
                    outcome.skipped = "skipped (no sk1 time)"
                    continue
                estimate = 10 * sk1[0].seconds
                if estimate > args.sk10_limit:
                    outcome.skipped = f"skipped (est. {estimate:.0f} s)"
                    progress(f"{case.label}: sk10 {outcome.skipped}")
                    continue
            try:
                run = fit_once(model, X, case.k, faiss)
            except Exception as exc:  # report it, go on with the others
                outcome.skipped = f"failed ({type(exc).__name__})"
                progress(f"{case.label}: {model} failed: {exc!r}")
                continue
            outcome.runs.append(run)
            progress(
                f"{case.label}: {model} {rep + 1}/{args.repeats}: {run.seconds:.3f} s, "
                f"{run.iters} iterations"
            )
            if rep == 0 and args.repeats > 1 and run.seconds > args.max_seconds:
                outcome.capped = True
                progress(f"{case.label}: {model} over --max-seconds, not repeated")
    return CaseResult(case, outcomes)


def warm_up(dense_d: int, sparse_d: int | None, faiss) -> tuple[float, str]:
    """Compile (or load from numba's cache) what our fits use, outside the
    timing: tiny fits of ours and hard on float32, float64 and CSR data (as
    wide as the sparse cases up to 400 features); and one of KMeans and of
    faiss for their imports. Returns the seconds it took and numba's
    threading layer."""
    import numba

    started = time.perf_counter()
    rng = np.random.default_rng(0)
    data = []
    for dtype in (np.float32, np.float64):
        for n, k in ((300, 4), (5_000, 32)):
            X = rng.standard_normal((n, dense_d)).astype(dtype)
            X[: n // 2] += 4.0
            data.append((X, k))
    if sparse_d is not None:
        data += [(tfidf_like(2_000, min(sparse_d, 400), seed=1), k) for k in (4, 32)]
    for X, k in data:
        for assignment in ("entmax15", "hard"):
            RBFKMeans(k, assignment=assignment, random_state=0, max_iter=5).fit(X)
    KMeans(4, n_init=1, random_state=0).fit(data[0][0])
    if faiss is not None:
        faiss.Kmeans(dense_d, 4, niter=2, seed=0).train(data[0][0])
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "none (no parallel kernel ran)"
    return time.perf_counter() - started, layer


# ------------------------------------------------------------------- tables


def ratio(a: float | None, b: float | None, digits: int = 2) -> str:
    return f"{a / b:.{digits}f}" if a is not None and b and b > 0 else "-"


def pruned_cell(name: str, outcome: Outcome, available: bool) -> str:
    if name not in OURS:
        return ""
    if not available:
        return "n/a"
    pruning = outcome.runs[-1].pruning if outcome.runs else None
    if pruning is None or not pruning.calls:
        return "-"
    return f"{100 * pruning.avoided:.1f}% ({pruning.pruned_calls}/{pruning.calls})"


COLUMNS = (
    "case", "n", "d", "k", "model", "fit s", "runs", "iters", "inertia / sk1",
    "inertia / sk10", "time / sk1", "time / sk10", "time / faiss", "pruned",
)  # fmt: skip


def table_rows(result: CaseResult, available: bool) -> list[list[str]]:
    """The case's rows, one per model, in the order of :data:`COLUMNS`."""
    case, rows = result.case, []
    for name, outcome in result.outcomes.items():
        start = [case.name, str(case.n), str(case.d), str(case.k), name]
        if not outcome.runs:
            rows.append([*start, outcome.skipped or "-", "0", *["-"] * 6, ""])
            continue
        seconds, last = outcome.seconds, outcome.runs[-1]
        rows.append(
            [
                *start,
                f"{seconds:.3f}",
                str(len(outcome.runs)),
                str(last.iters),
                ratio(last.inertia, result.inertia("sk1"), 6),
                ratio(last.inertia, result.inertia("sk10"), 6),
                *(ratio(seconds, result.seconds(m)) for m in ("sk1", "sk10", "faiss")),
                pruned_cell(name, outcome, available),
            ]
        )
    return rows


SUMMARY = (("ours", "sk1"), ("hard", "sk1"), ("hard", "faiss"), ("ours", "sk10"))


def growth(results: list[CaseResult], model: str, k_min: int = 0) -> tuple[str, str]:
    """The least-squares slope of log time against log k on the dense cases
    with ``k >= k_min``, and the ks behind it."""
    points = [
        (r.case.k, r.seconds(model))
        for r in results
        if not r.case.sparse and r.case.k >= k_min and r.seconds(model)
    ]
    ks = ",".join(str(k) for k, _ in points) or "-"
    if len({k for k, _ in points}) < 2:
        return "-", ks
    logk, logt = np.log([k for k, _ in points]), np.log([t for _, t in points])
    return f"{np.polyfit(logk, logt, 1)[0]:.2f}", ks


def markdown(results: list[CaseResult], head: str, args, notes: list[str]) -> str:
    """The header, the three tables and the notes, as markdown."""
    available = getattr(InMemoryRows, "pruned_stats", None) is not None
    runs = (
        f"Times: median of up to {args.repeats} run(s) per model, models alternating; "
        f"seed {SEED}; sk10 only where 10 x sk1 is under {args.sk10_limit:g} s."
    )
    lines = [head, "", runs, ""]
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    lines += ["| " + " | ".join(row) + " |" for r in results for row in table_rows(r, available)]

    lines += ["", "| case | k | " + " | ".join(f"{a}/{b}" for a, b in SUMMARY) + " |"]
    lines.append("|" + "---|" * (2 + len(SUMMARY)))
    for r in results:
        cells = [ratio(r.seconds(a), r.seconds(b)) for a, b in SUMMARY]
        lines.append(f"| {r.case.name} | {r.case.k} | " + " | ".join(cells) + " |")

    models = [m for m in args.models if any(r.seconds(m) for r in results if not r.case.sparse)]
    if models:
        lines += [
            "",
            "Growth of the time in k on the dense cases (slope of log time on log k):",
            "",
            f"| model | exponent, all ks | ks | exponent, k >= {GROWTH_FROM} | ks |",
            "|---|---|---|---|---|",
        ]
        for m in models:
            every, from_k = growth(results, m), growth(results, m, GROWTH_FROM)
            lines.append(f"| {m} | {every[0]} | {every[1]} | {from_k[0]} | {from_k[1]} |")

    if not available:
        notes = [*notes, "InMemoryRows has no pruned_stats: pruned n/a."]
    for r in results:
        notes += [
            f"{r.case.label}: {m} took over --max-seconds ({args.max_seconds:g} s) "
            "on its first run and was not repeated."
            for m, o in r.outcomes.items()
            if o.capped
        ]
    lines += ["", *(f"- {note}" for note in notes)] if notes else []
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- main


def int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated integers: {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"need positive integers: {text!r}")
    return values


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="n 20000, d 16, ks 16,64,256; sparse 10000 x 5000 at k 16 (unless given)",
    )
    parser.add_argument("--n", type=int, help="rows of the dense cases (default 200000)")
    parser.add_argument("--d", type=int, help="features of the dense cases (default 64)")
    parser.add_argument(
        "--ks", type=int_list, help="comma-separated ks, dense (default 32,128,512,1024,2048)"
    )
    parser.add_argument("--sparse-n", type=int, help="rows of the sparse cases (default 100000)")
    parser.add_argument("--sparse-d", type=int, help="features of the sparse cases (default 50000)")
    parser.add_argument(
        "--sparse-ks", type=int_list, help="comma-separated ks, sparse (default 64,256)"
    )
    parser.add_argument("--no-sparse", action="store_true", help="skip the sparse cases")
    parser.add_argument(
        "--models", default=",".join(MODELS), help=f"comma-separated subset of {','.join(MODELS)}"
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs per model (default 1)")
    parser.add_argument(
        "--sk10-limit",
        type=float,
        default=300.0,
        help="fit sk10 only where 10 x sk1's time is under this many seconds (default 300)",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=1200.0,
        help="no more repeats of a model whose first run took longer (default 1200)",
    )
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args(argv)
    quick = args.quick
    for name, full, small in (
        ("n", 200_000, 20_000),
        ("d", 64, 16),
        ("ks", DEFAULT_KS, QUICK_KS),
        ("sparse_n", 100_000, 10_000),
        ("sparse_d", 50_000, 5_000),
        ("sparse_ks", (64, 256), (16,)),
    ):
        if getattr(args, name) is None:
            setattr(args, name, small if quick else full)
    if min(args.n, args.d, args.sparse_n, args.sparse_d) < 1:
        parser.error("sizes must be positive")
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    chosen = {m.strip() for m in args.models.split(",") if m.strip()}
    unknown = chosen - set(MODELS)
    if unknown or not chosen:
        parser.error(f"--models: unknown {sorted(unknown)}; choose from {','.join(MODELS)}")
    args.added_sk1 = "sk10" in chosen and "sk1" not in chosen
    chosen |= {"sk1"} if args.added_sk1 else set()
    args.models = [m for m in MODELS if m in chosen]  # sk1 before sk10, always
    if max(args.ks) > args.n or (not args.no_sparse and max(args.sparse_ks) > args.sparse_n):
        parser.error("a k is more than the rows of its cases")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    notes = []
    if args.added_sk1:
        notes.append("sk1 added: sk10 is run only where 10 x sk1's time is under the limit.")
    faiss = load_faiss() if "faiss" in args.models else None
    if "faiss" in args.models and faiss is None:
        args.models.remove("faiss")
        notes.append("faiss does not import here: no faiss fits.")
    cases = [Case(False, args.n, args.d, k) for k in args.ks]
    if not args.no_sparse:
        cases += [Case(True, args.sparse_n, args.sparse_d, k) for k in args.sparse_ks]

    load_before = load_1min()
    progress("warm-up (compiling or loading numba's cache)")
    warm_seconds, layer = warm_up(args.d, None if args.no_sparse else args.sparse_d, faiss)
    progress(f"warm-up took {warm_seconds:.1f} s; threading layer {layer}")
    results, cache = [], {}
    for case in cases:
        progress(f"{case.label}: making the data")
        X = make_data(case, cache)
        results.append(run_case(case, X, args.models, args, faiss))
        del X
    head = header(layer, load_before, load_1min()) + f" Warm-up {warm_seconds:.1f} s."
    if faiss is not None:
        head += f" faiss {getattr(faiss, '__version__', '?')}."
    text = markdown(results, head, args, notes)
    print(text)
    if args.markdown:
        args.markdown.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
