"""Overhead of the Dask path against the numpy path, per iteration.

Usage: ``python bench/dask_overhead.py [--n 2000000] [--d 32] [--k 64]
[--chunks 16] [--repeats 7]``

One pass of each kind the fit makes per iteration (a hard Lloyd iteration:
assignment, sufficient statistics and inertia; a softmax and an entmax15 soft
step at a temperature where rows are soft) over the same float32 data from
the same centers, through three rows sources: numpy in memory (one kernel
call on the whole array), a dask array on the threaded scheduler, and the
same dask array persisted on a ``LocalCluster`` of two single-threaded worker
processes. The sources alternate, with a short pause before each run, so
that the machine's noise hits all alike; the table gives medians in ms and
the ratio to numpy. Also printed: the time of a pass over a one-row array on
the cluster (the fixed cost of a pass: graph, scheduling, round trips) and
the bytes a pass moves (the partials and the centers).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def blob_chunk(i: int, rows: int, means: np.ndarray) -> np.ndarray:
    """Rows of chunk ``i``: Gaussian blobs around ``means``, seeded by the chunk."""
    rng = np.random.default_rng([0, i])
    labels = rng.integers(0, means.shape[0], rows)
    return (rng.normal(size=(rows, means.shape[1])) + means[labels]).astype(np.float32)


def median_ms(fn, repeats):
    fn()  # warm up: first calls load kernels, workers fetch the centers key
    times = []
    for _ in range(repeats):
        time.sleep(0.2)
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--k", type=int, default=64)
    parser.add_argument("--chunks", type=int, default=16, help="row chunks of the dask array")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    import dask
    import dask.array as da
    from dask import delayed
    from distributed import Client, LocalCluster

    from fastrbfkm import _kernels as K
    from fastrbfkm._rows import InMemoryRows
    from fastrbfkm._threads import one_blas_thread
    from fastrbfkm.dask import check_array, make_rows

    n, d, k = args.n, args.d, args.k
    chunk = -(-n // args.chunks)
    sizes = [min(chunk, n - start) for start in range(0, n, chunk)]
    means = 4.0 * np.random.default_rng(0).normal(size=(k, d))
    # The same blobs, made chunk by chunk where the chunk lives (no 256 MB graph).
    parts = [
        da.from_delayed(delayed(blob_chunk)(i, size, means), (size, d), dtype=np.float32)
        for i, size in enumerate(sizes)
    ]
    Xd = check_array(da.concatenate(parts))
    X = np.concatenate([blob_chunk(i, size, means) for i, size in enumerate(sizes)])
    C = X[np.random.default_rng(1).choice(n, k, replace=False)].copy()
    hot = float(np.median(K.squared_distances(X[:4000], C)))

    numpy_rows = InMemoryRows(X, np.empty(0))
    with dask.config.set(scheduler="threads"):
        threaded_rows = make_rows(Xd, None)

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster, set_as_default=False)
    with client.as_current():
        cluster_rows = make_rows(Xd, None)
        tiny_rows = make_rows(check_array(da.from_array(X[:1], chunks=(1, d))), None)

    def on_threads(fn):
        def run():
            with dask.config.set(scheduler="threads"):
                return fn()

        return run

    def on_cluster(fn):
        def run():
            with client.as_current():
                return fn()

        return run

    passes = {
        "hard iteration": (0.0, K.HARD),
        "softmax step": (hot, K.SOFTMAX),
        "entmax15 step": (hot, K.ENTMAX15),
    }
    sources = {
        "numpy": (numpy_rows, one_blas_thread),
        "dask threads": (threaded_rows, on_threads),
        "dask LocalCluster 2x1": (cluster_rows, on_cluster),
    }
    results = {}
    for name, (sigma, mode) in passes.items():
        runs = {
            label: wrap(lambda rows=rows, sigma=sigma, mode=mode: rows.stats(C, sigma, mode))
            for label, (rows, wrap) in sources.items()
        }
        for run in runs.values():
            run()  # warm up every source before the alternation
        times = {label: [] for label in runs}
        for _ in range(args.repeats):
            for label, run in runs.items():
                time.sleep(0.2)
                start = time.perf_counter()
                run()
                times[label].append(time.perf_counter() - start)
        results[name] = {label: 1e3 * float(np.median(t)) for label, t in times.items()}
        # The three sources must agree (float64 sums of the same rows).
        N_ref = numpy_rows.stats(C, sigma, mode)[0]
        for label, (rows, wrap) in sources.items():
            N = wrap(lambda rows=rows, sigma=sigma, mode=mode: rows.stats(C, sigma, mode))()[0]
            assert np.allclose(N, N_ref, rtol=1e-9), label

    floor = median_ms(on_cluster(lambda: tiny_rows.stats(C, 0.0, K.HARD)), args.repeats)
    client.close()
    cluster.close()

    chunks = args.chunks
    partial = (k * (d + 1) + K.N_SUMMARY) * 8
    print(
        f"\n(n, d, k) = ({n}, {d}, {k}) float32, {chunks} row chunks of {chunk} rows, "
        f"medians of {args.repeats} runs, ms\n"
    )
    print("| pass | numpy | dask threads | ratio | dask LocalCluster 2x1 | ratio |")
    print("|---|---|---|---|---|---|")
    for name, r in results.items():
        base = r["numpy"]
        t, c = r["dask threads"], r["dask LocalCluster 2x1"]
        print(f"| {name} | {base:.1f} | {t:.1f} | {t / base:.2f}x | {c:.1f} | {c / base:.2f}x |")
    print(
        f"\nfixed cost of a pass on the cluster (one row, one chunk): {floor:.1f} ms; "
        f"a pass moves {chunks} partials of {partial / 1024:.1f} KiB "
        f"(k(d+1)+{K.N_SUMMARY} float64) and the centers ({k * d * 4 / 1024:.1f} KiB) "
        f"once to each worker"
    )


if __name__ == "__main__":
    main()
