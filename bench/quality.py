"""Inertia of annealed RBFKMeans against scikit-learn's KMeans(n_init=10).

Usage: ``python bench/quality.py [--sweep]``. Prints a markdown table: the
datasets of the estimator's quality test (blobs, iris, wine, digits), and with
``--sweep`` 24 more blob problems (8 seeds x 3 shapes), with the ratio
``inertia(RBFKMeans) / inertia(KMeans(n_init=10))`` and both fit times.
"""

import argparse
import time

import numpy as np
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from fastrbfkm import RBFKMeans
from fastrbfkm.datasets import make_blobs


def problems(sweep: bool):
    scale = StandardScaler()
    yield "blobs, separated", make_blobs(3000, centers=8, cluster_std=1.0, random_state=1)[0], 8
    yield "blobs, overlapping", make_blobs(3000, centers=8, cluster_std=3.0, random_state=2)[0], 8
    yield "iris (standardized)", scale.fit_transform(load_iris().data), 3
    yield "wine (standardized)", scale.fit_transform(load_wine().data), 3
    yield "digits (standardized)", scale.fit_transform(load_digits().data), 10
    if sweep:
        for seed in range(8):
            for std, k, n in [(0.7, 12, 5000), (1.0, 8, 3000), (2.0, 10, 4000)]:
                X = make_blobs(n, centers=k, cluster_std=std, random_state=100 + seed)[0]
                yield f"blobs seed {100 + seed}, std {std}, k {k}", X, k


def timed(estimator, X):
    start = time.perf_counter()
    estimator.fit(X)
    return estimator.inertia_, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sweep", action="store_true")
    args = parser.parse_args()
    RBFKMeans(2).fit(np.random.default_rng(0).normal(size=(50, 2)))  # compile first
    print(
        "| data | k | KMeans(n_init=10) | entmax15 / KMeans | softmax / KMeans "
        "| s (KMeans, entmax15) |"
    )
    print("|---|---|---|---|---|---|")
    ratios = []
    for name, X, k in problems(args.sweep):
        ref, t_ref = timed(KMeans(k, n_init=10, random_state=0), X)
        ent, t_ent = timed(RBFKMeans(k, assignment="entmax15", random_state=0), X)
        soft, _ = timed(RBFKMeans(k, assignment="softmax", random_state=0), X)
        ratios.append((ent / ref, soft / ref))
        print(
            f"| {name} | {k} | {ref:.6g} | {ent / ref:.5f} | {soft / ref:.5f} | "
            f"{t_ref:.2f}, {t_ent:.2f} |"
        )
    r = np.array(ratios)
    print(
        f"\nwithin 1.0005: entmax15 {np.mean(r[:, 0] <= 1.0005):.0%}, "
        f"softmax {np.mean(r[:, 1] <= 1.0005):.0%}; worst {r[:, 0].max():.4f}, "
        f"{r[:, 1].max():.4f}; median {np.median(r[:, 0]):.5f}, {np.median(r[:, 1]):.5f}"
    )


if __name__ == "__main__":
    main()
