"""fastrbfkm against its peers, side by side, in one process.

Usage: ``python bench/compare.py [--repeats 5] [--out compare.md] [--shapes small]
[--section all|cpu|gpu]``

Per Lloyd iteration from the same initial centers: one ``X @ C.T`` GEMM and
two GEMMs (``X @ C.T`` and ``R.T @ X``: the machine's limit for a soft step),
our fused hard pass (assignment, sufficient statistics and inertia), the
whole hard fit as users see it (``RBFKMeans(assignment="hard", init=C,
n_init=1, max_iter=10, tol=0).fit(X)`` divided by ``n_iter_``, validation,
setup and final labels included) against scikit-learn's
``KMeans(algorithm="lloyd")`` fitted the same way, faiss-cpu's ``Kmeans``
(fitted for a few iterations and divided by the count), our fused soft steps
(softmax at a high temperature; entmax15 at a high one and at a low one where
nearly every row is one-hot), and the PyTorch CPU soft step (cdist + softmax
or the entmax package's entmax15 + matmul). A summary table gives the ratios
the soft path is tuned against, then ``entmax15(Z)`` alone and the PyTorch
layer's forward + backward (:mod:`torch_loss`). Runs
alternate between the contenders so that the machine's noise hits all
alike, with a short pause before each run so that the thread pools of the
previous one (which spin for a while after a call) have gone idle; the table
gives medians, our time divided by the peer's, and GFLOP/s
counted as ``2 n k d`` per pass. Peers that are not installed are skipped
and said so (``pip install ".[bench]"``).

When fastrbfkm can use an NVIDIA GPU (``pip install ".[cuda]"`` and a CUDA
build of torch), a GPU section follows (:mod:`gpu_compare`): our device
step against the PyTorch CUDA step and one cuBLAS GEMM, at larger shapes.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from gpu_compare import gpu_present, gpu_section

from fastrbfkm import RBFKMeans
from fastrbfkm import _kernels as K
from fastrbfkm import entmax15 as fk_entmax15
from fastrbfkm._threads import one_blas_thread

SHAPES = {
    "full": [(1_000_000, 2, 8), (200_000, 32, 64), (50_000, 128, 1024)],
    "small": [(100_000, 2, 8), (20_000, 32, 64), (5_000, 128, 256)],
}


def optional(name):
    try:
        return __import__(name)
    except ImportError:
        print(f"({name} is not installed: its columns are skipped)")
        return None


def contenders(X, C, torch, faiss, entmax):
    n, d = X.shape
    k = C.shape[0]
    w = np.empty(0)
    D = K.squared_distances(X[:4000], C)
    hot = float(np.median(D))  # rows are soft
    # Nearly every row one-hot: 99% of the rows have their two nearest centers
    # more than 2 sigma apart in squared distance (entmax15's candidate cut).
    two = np.partition(D, 1, axis=1)[:, :2]
    cold = float(np.quantile(two[:, 1] - two[:, 0], 0.01)) / 2
    stats = one_blas_thread(K.block_stats)  # as the library's entry points run it
    R = np.random.default_rng(1).random((n, k)).astype(X.dtype)
    cases = {
        "GEMM X @ C.T": lambda: X @ C.T,
        "two GEMMs": lambda: (X @ C.T, R.T @ X),
        "ours hard": lambda: stats(X, C, w, 0.0, K.HARD, True),
        "ours softmax": lambda: stats(X, C, w, hot, K.SOFTMAX, True),
        "ours entmax15 hot": lambda: stats(X, C, w, hot, K.ENTMAX15, True),
        "ours entmax15 cold": lambda: stats(X, C, w, cold, K.ENTMAX15, True),
    }
    from sklearn.cluster import KMeans

    def fit_iteration():
        km = RBFKMeans(k, assignment="hard", init=C, n_init=1, max_iter=10, tol=0.0).fit(X)
        return km.n_iter_

    def sklearn_iteration():
        km = KMeans(k, init=C, n_init=1, max_iter=10, tol=0.0, algorithm="lloyd").fit(X)
        return km.n_iter_

    cases["ours hard fit"] = fit_iteration
    cases["scikit-learn lloyd"] = sklearn_iteration
    if faiss is not None and X.dtype == np.float32:

        def faiss_iteration():
            km = faiss.Kmeans(
                d,
                k,
                niter=5,
                seed=0,
                max_points_per_centroid=n,
                min_points_per_centroid=1,
                verbose=False,
            )
            km.train(X, init_centroids=C)
            return 5

        cases["faiss Kmeans"] = faiss_iteration
    if torch is not None:
        Xt, Ct = torch.from_numpy(X), torch.from_numpy(C)

        def torch_step(assign):
            Dt = torch.cdist(Xt, Ct) ** 2
            R = assign(-Dt / hot)
            return R.sum(0), R.T @ Xt, (R * Dt).sum()

        cases["torch softmax step"] = lambda: torch_step(lambda Z: torch.softmax(Z, dim=1))
        if entmax is not None:
            cases["torch entmax15 step"] = lambda: torch_step(lambda Z: entmax.entmax15(Z, dim=1))
    return cases


def summary_row(n, d, k, dtype, t):
    """The ratios the soft path is tuned against, from one shape's medians."""

    def ratio(a, b):
        return f"{t[a] / t[b]:.2f}" if a in t and b in t else "-"

    return (
        f"| {n}, {d}, {k} | {np.dtype(dtype).name} | {1e3 * t['two GEMMs']:.1f} "
        f"| {ratio('ours softmax', 'ours hard')} | {ratio('ours softmax', 'two GEMMs')} "
        f"| {ratio('ours entmax15 hot', 'ours softmax')} "
        f"| {ratio('ours entmax15 cold', 'ours hard')} "
        f"| {ratio('ours softmax', 'torch softmax step')} "
        f"| {ratio('ours entmax15 hot', 'torch entmax15 step')} "
        f"| {ratio('ours hard fit', 'scikit-learn lloyd')} |"
    )


def measure(cases, repeats, gap=0.2):
    for f in cases.values():  # compile, warm up
        f()
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, f in cases.items():
            # Thread pools (OpenBLAS, OpenMP, numba's) spin for a while after a
            # call and slow down whoever runs next on 2 cores: let them idle.
            time.sleep(gap)
            start = time.perf_counter()
            iterations = f()
            elapsed = time.perf_counter() - start
            if isinstance(iterations, int):  # whole fits: per iteration
                elapsed /= iterations
            times[name].append(elapsed)
    return {name: float(np.median(ts)) for name, ts in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default="compare.md")
    parser.add_argument("--shapes", choices=sorted(SHAPES), default="full")
    parser.add_argument("--section", choices=["all", "cpu", "gpu"], default="all")
    args = parser.parse_args()
    torch, faiss, entmax = optional("torch"), optional("faiss"), optional("entmax")
    gpu_lines = []
    if args.section != "cpu":
        if gpu_present():
            gpu_lines = gpu_section(torch, entmax, args.repeats, args.shapes)
        else:
            gpu_lines = ["", "GPU section: no CUDA GPU usable by fastrbfkm here; skipped."]
            print(gpu_lines[-1])
    if args.section == "gpu":
        with open(args.out, "w") as f:
            f.write("\n".join(gpu_lines) + "\n")
        print(f"wrote {args.out}")
        return
    if torch is not None:
        torch.set_num_threads(2)
    lines = [
        "| n, d, k | dtype | case | median ms | GFLOP/s | ours hard / it | ours / it |",
        "|---|---|---|---|---|---|---|",
    ]
    summary = [
        "| n, d, k | dtype | two GEMMs ms | softmax / hard | softmax / two GEMMs "
        "| entmax15 hot / softmax | entmax15 cold / hard | softmax / torch "
        "| entmax15 / torch + entmax | hard fit / scikit-learn fit |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, d, k in SHAPES[args.shapes]:
        for dtype in (np.float32, np.float64):
            rng = np.random.default_rng(0)
            X = rng.normal(size=(n, d)).astype(dtype)
            C = X[rng.choice(n, size=k, replace=False)].copy()
            result = measure(contenders(X, C, torch, faiss, entmax), args.repeats)
            flops = 2.0 * n * k * d
            for name, t in result.items():
                ours = ""
                if not name.startswith("ours"):
                    mine = (
                        "ours softmax"
                        if "softmax" in name
                        else ("ours entmax15 hot" if "entmax" in name else "ours hard")
                    )
                    if name == "scikit-learn lloyd":
                        mine = "ours hard fit"
                    ours = f"{result[mine] / t:.2f}"
                lines.append(
                    f"| {n}, {d}, {k} | {np.dtype(dtype).name} | {name} | "
                    f"{1e3 * t:.1f} | {flops / t / 1e9:.1f} | "
                    f"{result['ours hard'] / t:.2f} | {ours} |"
                )
            print("\n".join(lines[-len(result) :]), flush=True)
            summary.append(summary_row(n, d, k, dtype, result))
    entmax_alone = []
    if entmax is not None:
        Z = np.random.default_rng(1).normal(size=(200_000, 64)).astype(np.float32)
        Zt = torch.from_numpy(Z)
        r = measure(
            {
                "ours entmax15(Z)": lambda: fk_entmax15(Z),
                "entmax package entmax15(Z)": lambda: entmax.entmax15(Zt, dim=1),
                "torch softmax(Z)": lambda: torch.softmax(Zt, dim=1),
            },
            args.repeats,
        )
        entmax_alone = ["", "| 200000 x 64 logits, float32 | median ms |", "|---|---|"]
        entmax_alone += [f"| {name} | {1e3 * t:.1f} |" for name, t in r.items()]
        entmax_alone.append(
            f"\nours / entmax package: "
            f"{r['ours entmax15(Z)'] / r['entmax package entmax15(Z)']:.3f}; "
            f"ours / torch softmax(Z): {r['ours entmax15(Z)'] / r['torch softmax(Z)']:.2f}"
        )
        print("\n".join(entmax_alone))
    layer = []
    if torch is not None:
        from torch_loss import table

        layer = ["", "PyTorch layer, forward + backward, 4096 x 64, k = 64, CPU:", ""]
        layer += table(21)
        print("\n".join(layer))
    print("\n".join(summary))
    text = (
        "Columns: 'ours hard / it' is our fused hard pass divided by this row's time; "
        "'ours / it' our matching step (hard, softmax or entmax15 at the same sigma) "
        "divided by this peer's ('ours hard fit' for scikit-learn's fit).\n\n"
        + "\n".join(lines)
        + "\n\nRatios of medians (ours over the other):\n\n"
        + "\n".join(summary)
        + "\n"
        + "\n".join(entmax_alone)
        + "\n"
        + "\n".join(layer)
        + "\n".join(gpu_lines)
    )
    with open(args.out, "w") as f:
        f.write(text + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
