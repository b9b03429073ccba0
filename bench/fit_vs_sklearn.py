"""Whole fits: ``RBFKMeans(assignment="entmax15")`` with the default annealing
against scikit-learn's ``KMeans(n_init=10)`` on the same blobs.

Usage: ``python bench/fit_vs_sklearn.py [--n 200000 --d 32 --k 64 --repeats 2]``.
Prints wall times (median of the repeats, runs alternating) and the inertia
of each; the target is ours <= KMeans(n_init=10) in time with an inertia no
worse.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.cluster import KMeans

from fastrbfkm import RBFKMeans
from fastrbfkm.datasets import make_blobs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    X, _ = make_blobs(args.n, n_features=args.d, centers=args.k, random_state=0, dtype=np.float32)
    RBFKMeans(args.k, random_state=0, max_iter=2).fit(X[:5000])  # compile outside the timing
    models = {
        "fastrbfkm RBFKMeans(entmax15)": lambda: RBFKMeans(args.k, random_state=0),
        "scikit-learn KMeans(n_init=10)": lambda: KMeans(args.k, n_init=10, random_state=0),
    }
    times = {name: [] for name in models}
    inertia = {}
    for _ in range(args.repeats):
        for name, make in models.items():
            time.sleep(1.0)
            started = time.perf_counter()
            inertia[name] = make().fit(X).inertia_
            times[name].append(time.perf_counter() - started)
    ours, theirs = models
    print(f"(n, d, k) = ({args.n}, {args.d}, {args.k}), float32, {args.repeats} runs each\n")
    print("| model | median s | inertia |")
    print("|---|---|---|")
    for name in models:
        print(f"| {name} | {np.median(times[name]):.2f} | {inertia[name]:.6g} |")
    print(
        f"\ntime ratio {np.median(times[ours]) / np.median(times[theirs]):.2f}, "
        f"inertia ratio {inertia[ours] / inertia[theirs]:.6f}"
    )


if __name__ == "__main__":
    main()
