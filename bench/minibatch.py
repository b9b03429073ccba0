"""Mini-batch fits against scikit-learn's ``MiniBatchKMeans``, as a user runs them.

10,000,000 x 16 float32 blobs (64 centers), k = 64, each fit in a fresh
process that loads X from a .npy file into memory: the wall time of ``fit``
(the final labels and inertia over every row included, as both compute
them), the inertia, and the peak resident memory the fit adds above the
process with X loaded (VmHWM after resetting it, Linux), as a multiple of X.

Usage: ``python bench/minibatch.py [--n 10000000] [--repeats 3] [--sklearn-repeats 1]``

``python bench/minibatch.py --quality``: the inertia of mini-batch fits over
the full fit's (``RBFKMeans``, default settings), on three blob sets and
three seeds each, with scikit-learn's ``MiniBatchKMeans`` for comparison.
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

CHILD = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    kind, path = sys.argv[1], sys.argv[2]

    def status(key):
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

    if kind == "sklearn":
        from sklearn.cluster import MiniBatchKMeans
        est = MiniBatchKMeans(64, random_state=0)
    else:
        from fastrbfkm import MiniBatchRBFKMeans
        est = MiniBatchRBFKMeans(64, assignment=kind, random_state=0)
        # compile outside the timing (numba caches the kernels on disk)
        est.fit(np.load(path, mmap_mode="r")[:20000].copy())
    X = np.load(path)
    before = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    start = time.perf_counter()
    est.fit(X)
    seconds = time.perf_counter() - start
    peak = status("VmHWM") - before
    print(json.dumps({"seconds": seconds, "inertia": float(est.inertia_),
                      "steps": int(est.n_steps_), "peak": peak, "X": X.nbytes}))
    """
)


def run(kind: str, path: Path, timeout: float) -> dict | None:
    try:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, kind, str(path)],
            capture_output=True,
            text=True,
            check=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def quality() -> None:
    """Markdown table: inertia over the full fit's, three seeds each."""
    from sklearn.cluster import MiniBatchKMeans

    from fastrbfkm import MiniBatchRBFKMeans, RBFKMeans
    from fastrbfkm.datasets import make_blobs

    print("| n, d, k (blobs) | entmax15 | softmax | hard | MiniBatchKMeans |")
    print("|---|---|---|---|---|")
    for n, k, d, data_seed in ((40_000, 6, 3, 7), (60_000, 16, 4, 0), (200_000, 64, 16, 0)):
        X, _ = make_blobs(n, centers=k, n_features=d, random_state=data_seed)
        full = RBFKMeans(k, random_state=0).fit(X).inertia_
        cells = []
        for assignment in ("entmax15", "softmax", "hard"):
            ratios = [
                MiniBatchRBFKMeans(k, assignment=assignment, random_state=seed, batch_size=1000)
                .fit(X)
                .inertia_
                / full
                for seed in range(3)
            ]
            cells.append(" ".join(f"{r:.4f}" for r in ratios))
        sk = [MiniBatchKMeans(k, random_state=seed).fit(X).inertia_ / full for seed in range(3)]
        cells.append(" ".join(f"{r:.4f}" for r in sk))
        print(f"| {n}, {d}, {k} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--n", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sklearn-repeats", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args()
    if args.quality:
        quality()
        return

    from fastrbfkm.datasets import make_blobs

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "X.npy"
        X, _ = make_blobs(args.n, centers=64, n_features=16, random_state=0, dtype=np.float32)
        np.save(path, X)
        del X
        print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
        rows = {}
        for kind, repeats in (
            ("entmax15", args.repeats),
            ("softmax", args.repeats),
            ("hard", args.repeats),
            ("sklearn", args.sklearn_repeats),
        ):
            results = [run(kind, path, args.timeout) for _ in range(repeats)]
            done = [r for r in results if r is not None]
            rows[kind] = done
            print(kind, json.dumps(done), flush=True)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    ref = rows["sklearn"]
    ref_s = float(np.median([r["seconds"] for r in ref])) if ref else None
    ref_j = float(np.median([r["inertia"] for r in ref])) if ref else None
    names = {
        "entmax15": "MiniBatchRBFKMeans entmax15",
        "softmax": "MiniBatchRBFKMeans softmax",
        "hard": "MiniBatchRBFKMeans hard",
        "sklearn": "MiniBatchKMeans (scikit-learn)",
    }
    print()
    print(
        "| fit | s (median) | / scikit-learn | inertia / scikit-learn's | batches "
        "| peak above X / X |"
    )
    print("|---|---|---|---|---|---|")
    for kind, done in rows.items():
        if not done:
            print(f"| {names[kind]} | timed out after {args.timeout:.0f} s | | | | |")
            continue
        s = float(np.median([r["seconds"] for r in done]))
        j = float(np.median([r["inertia"] for r in done]))
        steps = int(np.median([r["steps"] for r in done]))
        peak = float(np.median([r["peak"] / r["X"] for r in done]))
        ratio = f"{s / ref_s:.3f}x" if ref_s else "-"
        jr = f"{j / ref_j:.4f}" if ref_j else "-"
        print(f"| {names[kind]} | {s:.2f} | {ratio} | {jr} | {steps} | {peak:.3f} |")


if __name__ == "__main__":
    main()
