"""The seeding of ``init="k-means++"``: greedy k-means++ on a sample of the
rows against greedy k-means++ on every row.

Usage::

    python bench/seeding.py                                  # every case, seeds 0, 1, 2
    python bench/seeding.py --cases china64,china256 --variants every,32,64
    python bench/seeding.py --quick                          # small n, one seed

Cases (``bench/many_modes.py`` and ``bench/kscale.py`` make the data):

- *aniso256*, *aniso1024*: 200,000 x 64 float32, 2000 anisotropic Gaussian
  modes of Dirichlet-mixed sizes (the many-modes data of the annealing
  issue), k = 256 and 1024;
- *china64*, *china256*: scikit-learn's china photograph, 273,280 RGB rows;
- *blobs1024*: ``make_blobs(200000, centers=4 k, n_features=64,
  random_state=0)`` float32 at k = 1024 (``bench/kscale.py``'s dense set).

Variants (``--variants``):

- *default*: ``init="k-means++"`` as the library runs it;
- *every*: greedy k-means++ on every row (the seeding before sampling);
- *sample:r*: greedy k-means++ on a sample of ``max(r k, --min-rows)`` rows
  alone;
- *hyb:r:R:F*: greedy k-means++ on a sample of ``max(r k, --min-rows)`` rows,
  then R k-means|| rounds of ``F k`` expected candidates over every row
  (distances to each round's new candidates only) and greedy weighted
  k-means++ on all the candidates (the default's kind, with its sizes
  patched);
- *par:R:F*: those R rounds from one row drawn at random (k-means|| alone);
- *kmpar*: ``fastrbfkm.seeding.kmeans_parallel``, the seeding of streamed and
  Dask input, on the rows in memory.

For each case, variant and seed (``--seeds``): the seeding alone (the
fit's call of ``rows.initial_centers``, timed inside) and the whole
``RBFKMeans(k, assignment="hard", random_state=seed)``. The table gives, per
variant, the seeding's median time in unpruned hard passes (one ``hard_assign`` over every row at k
centers with BLAS on one thread, as in a fit, timed in the same process: the
median of three), the hard fit's median time and its mean
inertia relative to *every*'s, and its mean Lloyd iterations. Compilation
stays outside the timing (a small fit first). The machine is shared: compare
the ratios, which are measured in one run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from machine import cpu_model, load_1min
from many_modes import gaussian_modes, photo

import fastrbfkm.seeding as seeding
from fastrbfkm import RBFKMeans
from fastrbfkm import _kernels as K
from fastrbfkm._rows import InMemoryRows
from fastrbfkm._threads import one_blas_thread
from fastrbfkm.datasets import make_blobs

CASES = {
    "aniso256": ("aniso", 256),
    "aniso1024": ("aniso", 1024),
    "china64": ("china", 64),
    "china256": ("china", 256),
    "blobs1024": ("blobs", 1024),
}


def make_data(name: str, k: int, n: int) -> np.ndarray:
    if name == "aniso":
        return gaussian_modes(n, 64, 2000, anisotropic=True)
    if name == "china":
        return photo("china")
    X, _ = make_blobs(n, centers=4 * k, n_features=64, random_state=0, dtype=np.float32)
    return X


class Variant:
    """Patches the seeding for the time of a with block."""

    NAMES = ("SEED_ROWS_PER_CENTER", "SEED_ROWS_MIN", "SEED_ROUNDS", "SEED_OVERSAMPLING")

    def __init__(self, name: str, min_rows: int):
        self.name = name
        self.min_rows = min_rows
        self.saved = None

    def __enter__(self):
        self.saved = [getattr(seeding, name) for name in self.NAMES]
        self.saved.append(InMemoryRows.initial_centers)
        kind, *numbers = self.name.split(":")
        if kind == "every":
            seeding.SEED_ROWS_MIN = 1 << 62
        elif kind in ("sample", "hyb"):
            seeding.SEED_ROWS_PER_CENTER = int(numbers[0])
            seeding.SEED_ROWS_MIN = self.min_rows
            seeding.SEED_ROUNDS = 0 if kind == "sample" else int(numbers[1])
            if kind == "hyb":
                seeding.SEED_OVERSAMPLING = float(numbers[2])
        elif kind == "par":
            original = InMemoryRows.initial_centers

            def parallel(rows, k, init, rng):
                if not (isinstance(init, str) and init == "k-means++"):
                    return original(rows, k, init, rng)
                start = rows.X[seeding.random_indices(rows.n, 1, rows.w, rng)]
                return seeding.kmeans_parallel_rows(
                    rows.nearest,
                    rows.take,
                    rows.n,
                    k,
                    rows.w,
                    rng,
                    start,
                    int(numbers[0]),
                    float(numbers[1]),
                )

            InMemoryRows.initial_centers = parallel
        elif kind == "kmpar":
            original = InMemoryRows.initial_centers

            def kmpar(rows, k, init, rng):
                if isinstance(init, str) and init == "k-means++":
                    return seeding.kmeans_parallel(rows, k, rng)
                return original(rows, k, init, rng)

            InMemoryRows.initial_centers = kmpar
        elif kind != "default":
            raise ValueError(f"unknown variant {self.name!r}")
        return self

    def __exit__(self, *exc):
        for name, value in zip(self.NAMES, self.saved, strict=False):
            setattr(seeding, name, value)
        InMemoryRows.initial_centers = self.saved[-1]


class SeedingClock:
    """Times the fits' calls of ``rows.initial_centers`` (in ``seconds``)."""

    def __enter__(self):
        self.seconds = []
        self.saved = InMemoryRows.initial_centers
        original = self.saved

        def clocked(rows, *args):
            s, out = timed(original, rows, *args)
            self.seconds.append(s)
            return out

        InMemoryRows.initial_centers = clocked
        return self

    def __exit__(self, *exc):
        InMemoryRows.initial_centers = self.saved


def timed(f, *args, **kwargs):
    start = time.perf_counter()
    out = f(*args, **kwargs)
    return time.perf_counter() - start, out


def run_case(case: str, variants: list[str], seeds: list[int], n: int, min_rows: int):
    name, k = CASES[case]
    X = make_data(name, k, n)
    C0 = X[np.random.default_rng(0).choice(X.shape[0], k, replace=False)]
    one_pass = one_blas_thread(K.hard_assign)  # as a fit runs it
    one_pass(X, C0, np.empty(0), False)
    pass_s = statistics.median(timed(one_pass, X, C0, np.empty(0), False)[0] for _ in range(3))
    results = {}
    for variant in variants:
        seed_s, fit_s, inertia, iters = [], [], [], []
        with Variant(variant, min_rows), SeedingClock() as clock:
            for seed in seeds:
                model = RBFKMeans(k, assignment="hard", random_state=seed)
                f, _ = timed(model.fit, X)
                seed_s.append(clock.seconds.pop())
                fit_s.append(f)
                inertia.append(model.inertia_)
                iters.append(model.n_iter_)
                print(
                    f"    {case} {variant} seed {seed}: seeding {seed_s[-1]:.2f} s, "
                    f"fit {f:.2f} s, inertia {inertia[-1]:.6g}, {iters[-1]} iterations",
                    file=sys.stderr,
                    flush=True,
                )
        results[variant] = (
            statistics.median(seed_s),
            statistics.median(fit_s),
            float(np.mean(inertia)),
            float(np.mean(iters)),
        )
        print(f"  {case} {variant}: {results[variant]}", file=sys.stderr, flush=True)
    base = results.get("every")
    lines = []
    for variant, (s, f, i, it) in results.items():
        fit = f"{f / base[1]:.3f}" if base else f"{f:.2f} s"
        inert = f"{i / base[2]:.5f}" if base else f"{i:.6g}"
        lines.append(
            f"| {case} ({X.shape[0]} x {X.shape[1]}, k {k}) | {variant} | {s / pass_s:.2f} "
            f"| {fit} | {inert} | {it:.1f} |"
        )
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--variants", default="every,default")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--n", type=int, default=200_000, help="rows of aniso and blobs")
    parser.add_argument("--min-rows", type=int, default=seeding.SEED_ROWS_MIN)
    parser.add_argument("--quick", action="store_true", help="n 20,000, seed 0")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.seeds = 20_000, "0"
    seeds = [int(s) for s in args.seeds.split(",")]
    variants = args.variants.split(",")
    RBFKMeans(8, assignment="hard", random_state=0).fit(
        np.random.default_rng(0).normal(size=(2000, 3)).astype(np.float32)
    )
    load = load_1min()
    print(f"CPU: {cpu_model()}; 1-min load {load:.2f} before", flush=True)
    print(
        "| case | seeding | seeding / unpruned pass | hard fit time / every's "
        "| inertia / every's (mean) | Lloyd iterations |"
    )
    print("|---|---|---|---|---|---|")
    for case in args.cases.split(","):
        for line in run_case(case, variants, seeds, args.n, args.min_rows):
            print(line, flush=True)
    print(f"1-min load {load_1min():.2f} after; seeds {seeds}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
