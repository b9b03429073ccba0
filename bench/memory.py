"""Peak resident memory of a soft fit on 10,000,000 x 16 float32 data, k = 64.

Usage: ``/usr/bin/time -v python bench/memory.py [--n 10000000]`` and read
"Maximum resident set size". The script prints its own figures too: the
resident size after the imports (the interpreter, numpy, numba, scikit-learn),
after making X, and the peak, against the size of X.

The fit is the default entmax15 annealing (from every center on the mean),
cut short: at most 3 steps a temperature (on its sample of 20000 rows) and
down to a twentieth of the critical temperature, then the hard refinement
(at most 3 Lloyd iterations) and the swap moves: every pass a full
annealing makes, at the cost of a few; memory does not grow with the number
of iterations. ``--seeded`` fits at one temperature from k-means++
seeds instead (that seeding holds two float64 vectors of n: 16 bytes a row).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from fastrbfkm import RBFKMeans, critical_temperature


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--d", type=int, default=16)
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--seeded", action="store_true")
    args = parser.parse_args()
    base = rss_mib()
    rng = np.random.default_rng(0)
    X = np.empty((args.n, args.d), dtype=np.float32)
    step = 1 << 20  # in slices, so that no temporary raises the peak
    for s in range(0, args.n, step):
        part = X[s : s + step]
        rng.standard_normal(out=part, dtype=np.float32)
        part += 4 * rng.integers(0, 8, size=(part.shape[0], 1)).astype(np.float32)
    size = X.nbytes / 2**20
    print(f"after imports {base:.0f} MiB; X {size:.0f} MiB; after X {rss_mib():.0f} MiB")
    started = time.perf_counter()
    if args.seeded:
        model = RBFKMeans(args.k, sigma=1.0, max_iter=3, random_state=0)
    else:
        sigma_min = critical_temperature(X, args.k) / 20
        model = RBFKMeans(args.k, sigma_min=sigma_min, anneal_steps=3, max_iter=3, random_state=0)
    model.fit(X)
    took = time.perf_counter() - started
    peak = peak_mib()
    print(
        f"fit {took:.1f} s, inertia {model.inertia_:.6g}; peak {peak:.0f} MiB = "
        f"{peak / size:.2f} x X ({(peak - base) / size:.2f} x X above the imports)"
    )


if __name__ == "__main__":
    main()
