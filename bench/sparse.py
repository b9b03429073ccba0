"""Sparse (CSR) input against scikit-learn's sparse ``KMeans``, as a user runs them.

A TF-IDF-like matrix (default 100,000 x 50,000, about 0.1% nonzero: ~50
terms a row drawn from a Zipf-like vocabulary, idf-weighted, rows scaled to
unit length), k = 64, float64. Every measurement runs in a fresh process that
loads the matrix from a ``.npz`` file (the kernels compiled beforehand, as
numba caches them on disk):

- ``per-iteration``: hard Lloyd iterations from the same 64 initial rows,
  ``tol=0``; the time per iteration is the difference between a fit of
  ``--long`` and one of ``--short`` iterations, over the difference in
  iterations, so that what a fit does once (validation, the final labels)
  cancels out. scikit-learn: ``KMeans(init=C0, n_init=1, algorithm="lloyd")``;
  ours: ``RBFKMeans(assignment="hard", init=C0, n_init=1)``.
- ``soft pass``: one fused softmax and entmax15 pass (``fastrbfkm.step``)
  at two temperatures, from the same centers, for scale.
- ``fit``: whole fits (``--fits``), wall time and inertia.

Usage: ``python bench/sparse.py [--n 100000] [--d 50000] [--repeats 3] [--fits hard,sklearn]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
from machine import cpu_model, usable_cpus

K_CLUSTERS = 64

CHILD = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    import scipy.sparse as sp
    kind, path, short, long_ = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    M = sp.load_npz(path).tocsr()
    C0 = M[np.random.default_rng(0).choice(M.shape[0], 64, replace=False)].toarray()
    import fastrbfkm as fk
    from sklearn.cluster import KMeans

    def lloyd(iterations):
        if kind == "sklearn":
            est = KMeans(64, init=C0, n_init=1, max_iter=iterations, tol=0, algorithm="lloyd")
        else:
            est = fk.RBFKMeans(64, assignment="hard", init=C0, n_init=1, max_iter=iterations, tol=0)
        start = time.perf_counter()
        est.fit(M)
        return time.perf_counter() - start, int(est.n_iter_), float(est.inertia_)

    if kind in ("sklearn", "hard"):
        lloyd(2)  # warm: imports, caches
        t0, i0, _ = lloyd(short)
        t1, i1, inertia = lloyd(long_)
        out = {"per_iteration": (t1 - t0) / max(i1 - i0, 1), "iterations": i1 - i0,
               "inertia": inertia}
    elif kind.startswith("pass-"):
        assignment, sigma = kind.split("-")[1], float(kind.split("-")[2])
        fk.step(M[:1000], C0, sigma, assignment)
        times = []
        for _ in range(3):
            start = time.perf_counter()
            fk.step(M, C0, sigma, assignment)
            times.append(time.perf_counter() - start)
        out = {"seconds": float(np.median(times))}
    else:  # a whole fit
        from sklearn.cluster import MiniBatchKMeans
        make = {
            "sklearn": lambda: KMeans(64, random_state=0),
            "sklearn_minibatch": lambda: MiniBatchKMeans(64, random_state=0),
            "hard": lambda: fk.RBFKMeans(64, assignment="hard", random_state=0),
            "entmax15": lambda: fk.RBFKMeans(64, random_state=0),
            "entmax15_norefine": lambda: fk.RBFKMeans(64, refine=False, random_state=0),
            "minibatch": lambda: fk.MiniBatchRBFKMeans(64, random_state=0),
            "minibatch_hard": lambda: fk.MiniBatchRBFKMeans(64, assignment="hard", random_state=0),
        }[kind.split("-")[1]]
        make().set_params(n_clusters=4).fit(M[:3000])  # compile, imports
        est = make()
        start = time.perf_counter()
        est.fit(M)
        out = {"seconds": time.perf_counter() - start, "inertia": float(est.inertia_)}
    print(json.dumps(out))
    """
)


def tfidf_like(n: int, d: int, per_row: float = 50.0, seed: int = 0):
    """A TF-IDF-like CSR matrix: Poisson(``per_row``) terms a row from a
    Zipf-like vocabulary (p_t ~ 1 / (t + 10)), term counts uniform in
    [0.1, 1.1), idf-weighted, rows scaled to unit length."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    lengths = rng.poisson(per_row, n)
    p = 1.0 / (np.arange(d) + 10.0)
    columns = rng.choice(d, size=int(lengths.sum()), p=p / p.sum())
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    M = sparse.csr_matrix((rng.random(columns.size) + 0.1, columns, indptr), shape=(n, d))
    M.sum_duplicates()
    idf = np.log(n / (1.0 + np.bincount(M.indices, minlength=d)))
    M = (M @ sparse.diags(idf)).tocsr()
    norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1))).ravel()
    return (sparse.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ M).tocsr()


def run(kind: str, path: Path, short: int, long_: int, timeout: float) -> dict | None:
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, kind, str(path), str(short), str(long_)],
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def median(results: list[dict], key: str) -> float:
    return float(np.median([r[key] for r in results]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--short", type=int, default=5)
    parser.add_argument("--long", type=int, default=25)
    parser.add_argument(
        "--fits",
        default="hard,sklearn",
        help="comma-separated whole fits: sklearn, sklearn_minibatch, hard, entmax15, "
        "entmax15_norefine, minibatch, minibatch_hard",
    )
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument(
        "--only-fits", action="store_true", help="skip the iteration and pass timings"
    )
    args = parser.parse_args()
    from scipy import sparse

    M = tfidf_like(args.n, args.d)
    density = M.nnz / (M.shape[0] * M.shape[1])
    print(
        f"{M.shape[0]} x {M.shape[1]}, {M.nnz} nonzeros ({100 * density:.3f}%), k = {K_CLUSTERS}; "
        f"{cpu_model()}, {usable_cpus()} usable CPUs; load average before "
        f"{os.getloadavg()[0]:.2f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "X.npz"
        sparse.save_npz(path, M, compressed=False)
        del M
        results = {}
        kinds = [] if args.only_fits else ["sklearn", "hard"]
        if not args.only_fits:
            kinds += [f"pass-{a}-{s}" for a in ("softmax", "entmax15") for s in ("0.5", "0.05")]
        kinds += [f"fit-{name}" for name in args.fits.split(",") if name]
        for kind in kinds:
            repeats = 1 if kind.startswith("fit-") else args.repeats
            done = [run(kind, path, args.short, args.long, args.timeout) for _ in range(repeats)]
            results[kind] = [r for r in done if r is not None]
            print(kind, json.dumps(done), flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f}")

    fits = {k: v for k, v in results.items() if k.startswith("fit-")}
    if args.only_fits:
        print_fits(fits, args.timeout)
        return
    ref = median(results["sklearn"], "per_iteration")
    print()
    print("| per Lloyd iteration | s (median) | / scikit-learn | inertia after the long fit |")
    print("|---|---|---|---|")
    for kind, name in (("sklearn", "KMeans (scikit-learn)"), ("hard", "RBFKMeans hard")):
        s = median(results[kind], "per_iteration")
        j = median(results[kind], "inertia")
        print(f"| {name} | {s:.3f} | {s / ref:.2f}x | {j:.2f} |")
    print()
    print(
        "| one fused soft pass (`fastrbfkm.step`) | s (median) | / scikit-learn's Lloyd iteration |"
    )
    print("|---|---|---|")
    for kind, done in results.items():
        if kind.startswith("pass-") and done:
            _, assignment, sigma = kind.split("-")
            s = median(done, "seconds")
            print(f"| {assignment}, sigma = {sigma} | {s:.3f} | {s / ref:.2f}x |")
    print_fits(fits, args.timeout)


def print_fits(fits: dict, timeout: float) -> None:
    if not fits:
        return
    print()
    print("| whole fit | s | inertia |")
    print("|---|---|---|")
    labels = {
        "sklearn": "`KMeans` (scikit-learn, defaults)",
        "sklearn_minibatch": "`MiniBatchKMeans` (scikit-learn, defaults)",
        "hard": '`RBFKMeans(assignment="hard")`',
        "entmax15": "`RBFKMeans()` (annealed, refined)",
        "entmax15_norefine": "`RBFKMeans(refine=False)` (annealed only)",
        "minibatch": "`MiniBatchRBFKMeans()` (entmax15, annealed)",
        "minibatch_hard": '`MiniBatchRBFKMeans(assignment="hard")`',
    }
    for kind, done in fits.items():
        label = labels[kind.split("-")[1]]
        if not done:
            print(f"| {label} | timed out after {timeout:.0f} s | |")
            continue
        print(f"| {label} | {done[0]['seconds']:.1f} | {done[0]['inertia']:.2f} |")


if __name__ == "__main__":
    main()
