"""The time-quality frontier of hard K-Means: every library's speed knobs.

Usage::

    pip install -e ".[bench]"                 # the peers (torch's CPU build first)
    python bench/frontier.py                  # the issue set and china, k = 1024 and 256
    python bench/frontier.py --sets issue --json r.json --markdown t.md --figure f.png
    python bench/frontier.py --sets sphere --sphere-n 1000000 --ks 4096
    python bench/frontier.py --sets sphere --sphere-n 1000000 --sphere-d 128 --ks 4096 \
        --sk1-seeds 0 --memmap /tmp --points "faiss: niter=25;SuperKMeans: hierarchical=True"
    python bench/frontier.py --sets topics --ks 64     # sparse: scikit-learn(-intelex) only

Sets (``bench/many_modes.py`` says how each is made; all seeded): *issue*,
the many-modes data of the annealing issue (200000 x 64 float32, 2000
anisotropic modes of Dirichlet-mixed sizes; k = 1024 by default); *china*
and *flower*, scikit-learn's photographs as 273280 RGB rows (k = 256);
*sphere*, embedding-like unit rows on subspaces of the sphere with 4 modes
a center (``--sphere-n`` rows, ``--sphere-d`` features, 64 unless
given); *aniso*, 200000 x 32 rows of 4
anisotropic modes a center; *topics*, a 20000 x 20000 TF-IDF-like CSR
matrix with 2 topics a center (only the libraries that take sparse input).

Each *point* is one library with one setting of its speed knobs, fitted in
this process on the set's rows (every library warmed up on small data first,
outside the timing). A point's time is what a user waits for centers and a
label for every row: the library's fit, plus its own assignment of every
row where its fit does not label them (faiss: a flat index's search;
SuperKMeans: ``assign``; fastkmeans: ``predict``; scikit-learn,
scikit-learn-intelex and fastrbfkm label every row in the fit). The
training time alone is kept too (``train_s``). Every inertia is recomputed
here in float64 at the returned centers, over every row, and given over the
mean inertia of ``KMeans(n_init=1)`` for the seeds of ``--sk1-seeds``; with
``--sk1-seeds 0`` (large sets, where scikit-learn would take hours) over
the inertia of the first peer point measured instead (``faiss: niter=25``
where it runs), which the tables then name. Every point also records the
peak of the process's anonymous resident memory during its fit above
what it was before (``peak_mib``, sampled every 10 ms from
``/proc/self/status`` where there is one): the memory a library adds to
the rows, which stay mapped from the file with ``--memmap DIR`` (the rows
written there once as ``.npy`` and every library given the read-only
mapping, as a user with a file on disk would) and count here otherwise.
``--points`` keeps only the points whose label (``library: setting``, as
the tables print it) starts with one of the ``;``-separated prefixes.

The peers and their knobs:

- scikit-learn ``KMeans``: ``n_init`` 1 (three seeds: the reference) and 3,
  ``max_iter`` 10 and 300, ``tol`` 1e-4 and 1e-2;
- scikit-learn-intelex ``KMeans`` (oneDAL): the same points;
- faiss ``Kmeans``: ``niter`` 5, 10, 25 with its default subsampling (at
  most 256 rows a centroid, ``max_points_per_centroid``), and 25 on every
  row;
- SuperKMeans: flat with ``iters`` 5, 10 (its default), 25 and
  ``sampling_fraction`` 0.3 (its default) and 1.0, and hierarchical (its
  defaults);
- fastkmeans on the CPU: ``niter`` 10 and 25.

fastrbfkm's points are ``RBFKMeans(assignment="hard")`` with ``train_size``
(a sample of that many rows learns the centers, every row is labelled),
``max_iter`` and ``init``, and the default annealed ``RBFKMeans()``. The
table says, for every peer point, the fastest fastrbfkm point with a lower
inertia in no more time, or that none is: the frontier target of the issue.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from any_k import inertia64
from machine import header, load_1min
from many_modes import gaussian_modes, photo, sphere_modes, topic_tfidf
from scipy import sparse

from fastrbfkm import RBFKMeans

SEED = 0


def progress(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------- sets


@dataclass(frozen=True)
class Set:
    name: str
    k: int
    n: int
    d: int

    @property
    def key(self) -> str:
        return f"{self.name} n{self.n} d{self.d} k{self.k}"


def make_rows(s: Set):
    if s.name == "issue":
        return gaussian_modes(s.n, s.d, 2000, anisotropic=True)
    if s.name in ("china", "flower"):
        return photo(s.name)
    if s.name == "sphere":  # embedding-like unit rows, 4 modes a center
        return sphere_modes(s.n, s.d, 4 * s.k)
    if s.name == "aniso":  # 4 anisotropic modes a center
        return gaussian_modes(s.n, s.d, 4 * s.k, anisotropic=True)
    if s.name == "topics":  # TF-IDF-like CSR rows, 2 topics a center
        return topic_tfidf(s.n, s.d, 2 * s.k)
    raise ValueError(f"unknown set {s.name!r}")


def sets(args) -> list[Set]:
    out = []
    for name in args.sets.split(","):
        if name == "issue":
            out += [Set("issue", k, 200_000, 64) for k in args.ks or (1024,)]
        elif name in ("china", "flower"):
            out += [Set(name, k, 273_280, 3) for k in args.ks or (256,)]
        elif name == "sphere":
            out += [Set("sphere", k, args.sphere_n, args.sphere_d) for k in args.ks or (1024,)]
        elif name == "aniso":
            out += [Set("aniso", k, 200_000, 32) for k in args.ks or (1024,)]
        elif name == "topics":
            out += [Set("topics", k, 20_000, 20_000) for k in args.ks or (64,)]
        else:
            raise SystemExit(f"unknown set {name!r}")
    return out


# ------------------------------------------------------------------- points


@dataclass
class Point:
    library: str
    setting: str
    make: object = field(repr=False)  # (X, k, seed) -> (centers, train s, labelled s)
    sparse: bool = False  # takes a scipy.sparse CSR matrix


def _sklearn(KMeans, **kw):
    def fit(X, k, seed):
        started = time.perf_counter()
        est = KMeans(k, random_state=seed, **kw).fit(X)
        return est.cluster_centers_, time.perf_counter() - started, None

    return fit


def _faiss(niter, mppc):
    def fit(X, k, seed):
        import faiss

        started = time.perf_counter()
        km = faiss.Kmeans(X.shape[1], k, niter=niter, seed=seed + 1, max_points_per_centroid=mppc)
        km.train(X)
        trained = time.perf_counter() - started
        km.index.search(X, 1)
        return km.centroids, trained, time.perf_counter() - started

    return fit


def _superkmeans(**kw):
    def fit(X, k, seed):
        import superkmeans

        started = time.perf_counter()
        model = superkmeans.SuperKMeans(k, X.shape[1], seed=seed + 42, **kw)
        C = model.train(X)
        trained = time.perf_counter() - started
        model.assign(X, np.ascontiguousarray(C))
        return C, trained, time.perf_counter() - started

    return fit


def _fastkmeans(niter):
    def fit(X, k, seed):
        from fastkmeans import FastKMeans

        started = time.perf_counter()
        model = FastKMeans(X.shape[1], k, niter=niter, gpu=False, seed=seed)
        model.train(X)
        trained = time.perf_counter() - started
        model.predict(X)
        return model.centroids, trained, time.perf_counter() - started

    return fit


def _ours(**kw):
    def fit(X, k, seed):
        started = time.perf_counter()
        est = RBFKMeans(k, random_state=seed, **kw).fit(X)
        return est.cluster_centers_, time.perf_counter() - started, None

    return fit


def setting(kw: dict) -> str:
    return ", ".join(f"{key}={value!r}" for key, value in kw.items()) or "defaults"


def peer_points(only: set[str] | None) -> list[Point]:
    points: list[Point] = []

    def add(library, kw, make):
        if only is None or library in only:
            takes_csr = library.startswith("scikit-learn")
            points.append(Point(library, setting(kw), make, takes_csr))

    from sklearn.cluster import KMeans

    for kw in ({"n_init": 3}, {"n_init": 1, "max_iter": 10}, {"n_init": 1, "tol": 1e-2}):
        add("scikit-learn", kw, _sklearn(KMeans, **kw))
    try:
        from sklearnex.cluster import KMeans as IntelKMeans

        for kw in ({"n_init": 1}, {"n_init": 1, "max_iter": 10}, {"n_init": 1, "tol": 1e-2}):
            add("scikit-learn-intelex", kw, _sklearn(IntelKMeans, **kw))
    except ImportError:
        progress("scikit-learn-intelex is not installed: skipped")
    try:
        import faiss  # noqa: F401

        for niter in (5, 10, 25):
            add("faiss", {"niter": niter}, _faiss(niter, 256))
        add("faiss", {"niter": 25, "max_points_per_centroid": "every row"}, _faiss(25, 1 << 30))
    except ImportError:
        progress("faiss is not installed: skipped")
    try:
        import superkmeans  # noqa: F401

        for iters in (5, 10, 25):
            for fraction in (0.3, 1.0):
                kw = {"hierarchical": False, "iters": iters, "sampling_fraction": fraction}
                add("SuperKMeans", kw, _superkmeans(**kw))
        add("SuperKMeans", {"hierarchical": True}, _superkmeans(hierarchical=True))
    except ImportError:
        progress("superkmeans is not installed: skipped")
    try:
        import fastkmeans  # noqa: F401

        for niter in (10, 25):
            add("fastkmeans", {"niter": niter}, _fastkmeans(niter))
    except ImportError:
        progress("fastkmeans is not installed: skipped")
    return points


def our_points(k: int, n: int) -> list[Point]:
    """fastrbfkm's settings: hard fits on samples of 4 .. 128 rows a
    center (k-means++, or random rows for the fastest), or every row, and
    the default annealed fit on a sample and on every row."""
    grid: list[dict] = []
    for per_center in (4, 8, 16, 32, 64, 128):
        if per_center * k >= n:
            continue
        for max_iter in (5, 20):
            grid.append({"assignment": "hard", "train_size": per_center * k, "max_iter": max_iter})
    for per_center in (4, 16):
        if per_center * k < n:
            kw = {"assignment": "hard", "init": "random", "train_size": per_center * k}
            grid.append({**kw, "max_iter": 10})
    grid.append({"assignment": "hard", "max_iter": 10})
    grid.append({"assignment": "hard"})
    if 64 * k < n:
        grid.append({"train_size": 64 * k})
    grid.append({})  # the default: annealing and its polish on every row
    return [Point("fastrbfkm", setting(kw), _ours(**kw), True) for kw in grid]


def label(point: Point) -> str:
    return f"{point.library}: {point.setting}"


# -------------------------------------------------------------------- runs


def anonymous_mib() -> float:
    """The process's anonymous resident memory (``RssAnon``), MiB; NaN
    where ``/proc`` has none. Memory-mapped rows are file pages, not in it."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class PeakMemory:
    """The peak of :func:`anonymous_mib` above its value at the start,
    sampled every 10 ms on a thread while the ``with`` block runs."""

    def __enter__(self):
        self.start = self.peak = anonymous_mib()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._done.wait(0.01):
            self.peak = max(self.peak, anonymous_mib())

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, anonymous_mib())

    @property
    def added(self) -> float:
        return self.peak - self.start


def measure(point: Point, X, k: int, seed: int = SEED) -> dict:
    gc.collect()
    with warnings.catch_warnings(), PeakMemory() as memory:
        warnings.simplefilter("ignore")
        C, trained, labelled = point.make(X, k, seed)
    return {
        "library": point.library,
        "setting": point.setting,
        "seconds": labelled if labelled is not None else trained,
        "train_s": trained,
        "peak_mib": memory.added,
        "inertia": inertia64(X, np.asarray(C), False),
    }


def warm_up(points: list[Point]) -> None:
    """Compile or load every library's code outside the timing."""
    X = gaussian_modes(4_000, 8, 40, anisotropic=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for point in points:
            try:
                point.make(X, 16, SEED)
            except Exception as error:
                progress(f"warm-up of {point.library} ({point.setting}) failed: {error!r}")


def open_rows(s: Set, memmap: Path | None):
    """The set's rows, in memory or (``memmap``) mapped read-only from an
    ``.npy`` file there (written the first time)."""
    if memmap is None:
        return make_rows(s)
    path = memmap / f"frontier-{s.key.replace(' ', '-')}.npy"
    if not path.exists():
        np.save(path, make_rows(s))
    return np.load(path, mmap_mode="r")


def reference(entry: dict) -> tuple[str, dict]:
    """What the inertia ratios are over: ``KMeans(n_init=1)``'s mean, or,
    where it was not run, the first peer point measured."""
    if "sk1" in entry:
        return "sk1", entry["sk1"]
    for name, p in entry["points"].items():
        if p["library"] != "fastrbfkm" and "error" not in p:
            return name, p
    raise SystemExit(f"no reference point for {entry['set']}: run sk1 or a peer")


def run_set(
    s: Set, points: list[Point], sk1_seeds: int, results: dict, memmap: Path | None = None
) -> dict:
    X = open_rows(s, memmap)
    entry = results.setdefault(s.key, {"set": s.__dict__, "points": {}})
    from sklearn.cluster import KMeans

    if "sk1" not in entry and sk1_seeds > 0:
        runs = []
        for seed in range(sk1_seeds):
            progress(f"{s.key}: KMeans(n_init=1, random_state={seed})")
            runs.append(
                measure(Point("scikit-learn", "n_init=1", _sklearn(KMeans, n_init=1)), X, s.k, seed)
            )
        entry["sk1"] = {
            "inertia": float(np.mean([r["inertia"] for r in runs])),
            "seconds": float(np.median([r["seconds"] for r in runs])),
            "runs": runs,
        }
    for point in points:
        name = label(point)
        if name in entry["points"] or (sparse.issparse(X) and not point.sparse):
            continue  # done, or a library without sparse input
        progress(f"{s.key}: {name}")
        try:
            entry["points"][name] = measure(point, X, s.k)
        except Exception as error:
            progress(f"  failed: {error!r}")
            entry["points"][name] = {
                "library": point.library,
                "setting": point.setting,
                "error": repr(error),
            }
    return entry


# ----------------------------------------------------------------- reports


def dominating(entry: dict, peer: dict) -> dict | None:
    """The fastest fastrbfkm point with a lower inertia in no more time."""
    ours = [
        p
        for p in entry["points"].values()
        if p["library"] == "fastrbfkm"
        and "error" not in p
        and p["inertia"] < peer["inertia"]
        and p["seconds"] <= peer["seconds"]
    ]
    return min(ours, key=lambda p: p["seconds"]) if ours else None


def markdown(results: dict, keys: list[str], head: str) -> str:
    lines = [head, ""]
    for key in keys:
        entry = results[key]
        ref_name, ref = reference(entry)
        if ref_name == "sk1":
            said = f"{ref['seconds']:.2f} s (median of {len(ref['runs'])} seeds), inertia "
            said += f"{ref['inertia']:.6g} (their mean) = 1."
            ref_name = "`KMeans(n_init=1)`"
        else:
            said = f"{ref['seconds']:.2f} s, inertia {ref['inertia']:.6g} = 1 (no scikit-learn)."
        lines += [
            f"### {key}",
            "",
            f"{ref_name}: {said}",
            "",
            "| library | setting | time (s) | train (s) | added memory (MiB) | inertia / ref. "
            "| dominated by fastrbfkm |",
            "|---|---|---|---|---|---|---|",
        ]
        points = sorted(
            entry["points"].values(),
            key=lambda p: (p["library"] == "fastrbfkm", p["library"], p.get("seconds", 0)),
        )
        missed = 0
        for p in points:
            if "error" in p:
                lines.append(
                    f"| {p['library']} | {p['setting']} | failed | | | {p['error'][:60]} |"
                )
                continue
            verdict = ""
            if p["library"] != "fastrbfkm":
                best = dominating(entry, p)
                if best is None:
                    missed += 1
                    verdict = "**no**"
                else:
                    ratio = best["inertia"] / ref["inertia"]
                    verdict = f"{best['setting']} ({best['seconds']:.2f} s, {ratio:.4f})"
            peak = p.get("peak_mib")
            lines.append(
                f"| {p['library']} | {p['setting']} | {p['seconds']:.2f} | {p['train_s']:.2f} | "
                f"{'-' if peak is None else f'{peak:.0f}'} | "
                f"{p['inertia'] / ref['inertia']:.4f} | {verdict} |"
            )
        lines += ["", f"Peer points not dominated: {missed}.", ""]
    return "\n".join(lines)


def figure(results: dict, keys: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(3, len(keys))
    grid = -(-len(keys) // cols)
    fig, axes = plt.subplots(grid, cols, figsize=(6.5 * cols, 5 * grid), squeeze=False)
    for ax in axes.flat[len(keys) :]:
        ax.set_visible(False)
    markers = {
        "fastrbfkm": "o",
        "scikit-learn": "s",
        "scikit-learn-intelex": "D",
        "faiss": "^",
        "SuperKMeans": "v",
        "fastkmeans": "P",
    }
    for ax, key in zip(axes.flat, keys, strict=False):
        entry = results[key]
        ref_name, found = reference(entry)
        ref = found["inertia"]
        by_library: dict[str, list] = {}
        for p in entry["points"].values():
            if "error" not in p:
                by_library.setdefault(p["library"], []).append((p["seconds"], p["inertia"] / ref))
        if ref_name == "sk1":
            by_library.setdefault("scikit-learn", []).append((found["seconds"], 1.0))
        for library, pts in sorted(by_library.items()):
            pts.sort()
            t, r = zip(*pts, strict=True)
            ax.plot(t, r, markers.get(library, "x"), label=library, markersize=7, linestyle="")
            if library == "fastrbfkm":  # its frontier: no point faster and lower
                front = [
                    p for p in pts if not any(q != p and q[0] <= p[0] and q[1] < p[1] for q in pts)
                ]
                ft, fr = zip(*front, strict=True)
                ax.step(ft, fr, where="post", color=ax.lines[-1].get_color(), linewidth=1)
        ax.set_xscale("log")
        ax.set_xlabel("seconds: fit and a label for every row")
        ax.set_ylabel(f"inertia / {'KMeans(n_init=1)' if ref_name == 'sk1' else ref_name}")
        ax.set_title(key, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    progress(f"figure written to {path}")


def int_list(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(",") if v)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--sets", default="issue,china", help="issue, china, flower, sphere, aniso, topics"
    )
    p.add_argument("--ks", type=int_list, help="k for every set (default: issue 1024, photos 256)")
    p.add_argument("--sphere-n", type=int, default=200_000)
    p.add_argument("--sphere-d", type=int, default=64)
    p.add_argument("--memmap", type=Path, help="fit the rows mapped from .npy files in this folder")
    p.add_argument("--points", help="';'-separated label prefixes of the points to run")
    p.add_argument(
        "--libraries", help="comma-separated peers to run (default: every one installed)"
    )
    p.add_argument("--sk1-seeds", type=int, default=3)
    p.add_argument("--json", type=Path, help="results file: read, extended, written")
    p.add_argument("--markdown", type=Path)
    p.add_argument("--figure", type=Path)
    p.add_argument("--report", action="store_true", help="only write the reports from --json")
    args = p.parse_args(argv)
    results = json.loads(args.json.read_text()) if args.json and args.json.exists() else {}
    before = load_1min()
    only = set(args.libraries.split(",")) if args.libraries else None
    todo = sets(args)
    prefixes = tuple(args.points.split(";")) if args.points else ("",)
    peers = [] if args.report else peer_points(only)
    peers = [q for q in peers if label(q).startswith(prefixes)]
    if not args.report:
        warm_up(peers + our_points(16, 4_000))
    for s in [] if args.report else todo:
        points = peers + [q for q in our_points(s.k, s.n) if label(q).startswith(prefixes)]
        run_set(s, points, args.sk1_seeds, results, args.memmap)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    import numba

    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "none"
    text = markdown(results, [s.key for s in todo], header(layer, before, load_1min()))
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    if args.figure:
        figure(results, [s.key for s in todo], args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
