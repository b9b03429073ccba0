"""Whole fits on wide data: time and peak memory above X (issue 16, item 3).

Usage::

    python bench/wide_fit.py                          # 1000 x 100000 float32, k = 8
    python bench/wide_fit.py --n 300 --d 30000 --k 4  # smaller

Every measurement is a fresh Python process (``--child``) that makes the
data (k Gaussian blobs, centers drawn with scale 3, unit noise; float32,
built in 16-row slices so that no temporary the size of X exists), fits a
small wide problem first so that the kernels are compiled or loaded before
the measurement, then resets its peak resident size (``/proc/self/clear_refs``,
Linux) and times one fit. It prints the fit's seconds, the peak resident
size above the size before the fit, and the inertia, as JSON. Contenders:
``RBFKMeans`` with ``entmax15`` (the default annealed fit), ``softmax`` and
``hard``, and scikit-learn's ``KMeans(n_clusters=k, random_state=0)``
(``n_init="auto"``: one k-means++ run). Configurations alternate within each
repeat; the table gives medians and the load before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machine

CONTENDERS = ["entmax15", "softmax", "hard", "sklearn"]


def _status(key: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))


def _data(n: int, d: int, k: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=3.0, size=(k, d)).astype(np.float32)
    labels = rng.integers(k, size=n)
    X = np.empty((n, d), dtype=np.float32)
    for s in range(0, n, 16):
        X[s : s + 16] = centers[labels[s : s + 16]] + rng.normal(size=(len(X[s : s + 16]), d))
    return X


def child(contender: str, n: int, d: int, k: int) -> None:
    if contender == "sklearn":
        from sklearn.cluster import KMeans

        def make():
            return KMeans(n_clusters=k, random_state=0)
    else:
        from fastrbfkm import RBFKMeans

        def make():
            return RBFKMeans(n_clusters=k, assignment=contender, random_state=0)

    make().fit(np.random.default_rng(1).normal(size=(64, 300)).astype(np.float32))
    X = _data(n, d, k)
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    t0 = time.perf_counter()
    model = make().fit(X)
    seconds = time.perf_counter() - t0
    peak = _status("VmHWM") - before
    print(json.dumps({"seconds": seconds, "peak_above": peak, "inertia": float(model.inertia_)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--d", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", choices=CONTENDERS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.n, args.d, args.k)
        return
    x_bytes = args.n * args.d * 4
    load_before = machine.load_1min()
    results: dict[str, list[dict]] = {c: [] for c in CONTENDERS}
    for r in range(args.repeats):
        for contender in CONTENDERS:
            cmd = [sys.executable, __file__, "--child", contender]
            cmd += ["--n", str(args.n), "--d", str(args.d), "--k", str(args.k)]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
            if out.returncode != 0:
                sys.exit(out.stderr)
            results[contender].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"repeat {r + 1} {contender}: {results[contender][-1]}", file=sys.stderr)
    print(f"Machine: {machine.cpu_model()}, {machine.usable_cpus()} CPUs; {machine.versions()}")
    print(f"Load (1 min) before {load_before:.2f}, after {machine.load_1min():.2f}.")
    print(
        f"X: {args.n} x {args.d} float32 ({x_bytes / 2**20:.0f} MiB), k = {args.k}; "
        f"medians of {args.repeats} fresh processes.\n"
    )
    print("| fit | seconds | peak above X's process size, MiB | / X | inertia |")
    print("|---|---|---|---|---|")
    sk = statistics.median(r["seconds"] for r in results["sklearn"])
    for contender in CONTENDERS:
        runs = results[contender]
        seconds = statistics.median(r["seconds"] for r in runs)
        peak = statistics.median(r["peak_above"] for r in runs)
        name = "KMeans (scikit-learn)" if contender == "sklearn" else f"RBFKMeans {contender}"
        ratio = "" if contender == "sklearn" else f" ({seconds / sk:.1f}x KMeans)"
        print(
            f"| {name} | {seconds:.1f}{ratio} | {peak / 2**20:.0f} | {peak / x_bytes:.2f} | "
            f"{statistics.median(r['inertia'] for r in runs):.6g} |"
        )


if __name__ == "__main__":
    main()
