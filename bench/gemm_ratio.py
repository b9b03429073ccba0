"""Time the fused kernels against one ``X @ C.T`` GEMM, alternating runs.

Usage: ``python bench/gemm_ratio.py [--repeats 9]``. Prints a markdown table of
median times and ratios (kernel / GEMM) for float32 and float64.
"""

import argparse
import time

import numpy as np

import fastrbfkm as fk

SHAPES = [(200_000, 32, 64), (1_000_000, 2, 8), (50_000, 128, 1024)]


def cases(X, C, sigma):
    return {
        "GEMM X @ C.T": lambda: X @ C.T,
        "hard stats": lambda: fk.sufficient_statistics(X, C, 0.0, "hard"),
        "softmax objective": lambda: fk.objective(X, C, sigma, "softmax"),
        "softmax stats": lambda: fk.sufficient_statistics(X, C, sigma, "softmax"),
        "entmax15 objective": lambda: fk.objective(X, C, sigma, "entmax15"),
        "entmax15 stats": lambda: fk.sufficient_statistics(X, C, sigma, "entmax15"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    print("| n, d, k | dtype | case | median ms | / GEMM |")
    print("|---|---|---|---|---|")
    for n, d, k in SHAPES:
        for dtype in (np.float32, np.float64):
            rng = np.random.default_rng(0)
            X = rng.normal(size=(n, d)).astype(dtype)
            C = X[rng.choice(n, size=k, replace=False)].copy()
            # sigma at the median squared distance: a genuinely soft regime.
            sigma = float(np.median(fk.squared_distances(X[:2000], C)))
            fns = cases(X, C, sigma)
            for f in fns.values():  # compile and warm up
                f()
            times = {name: [] for name in fns}
            for _ in range(args.repeats):  # alternate, so noise hits every case alike
                for name, f in fns.items():
                    t = time.perf_counter()
                    f()
                    times[name].append(time.perf_counter() - t)
            gemm = np.median(times["GEMM X @ C.T"])
            for name, ts in times.items():
                med = np.median(ts)
                print(
                    f"| {n}, {d}, {k} | {np.dtype(dtype).name} | {name} | "
                    f"{1e3 * med:.1f} | {med / gemm:.2f} |"
                )


if __name__ == "__main__":
    main()
