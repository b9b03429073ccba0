"""One pass over the data at many clusters: pruned and unpruned, hard and soft.

Usage::

    python bench/pruned_pass.py                      # 100,000 x 32 float32, k = 1024
    python bench/pruned_pass.py --n 50000 --d 64 --k 256 --repeats 9

The data is ``fastrbfkm.datasets.make_blobs(n, centers=4 k, n_features=d,
random_state=0, dtype=float32)``, the centers those of
``RBFKMeans(k, assignment="hard", random_state=0)`` fitted to it (a K-Means
fixed point, as at the end of a fit or at a cold temperature of an
annealing). Every pass runs at those centers, in this process, after one
untimed pass of its own kind (which also sets up the bounds that the pruned
passes carry from one pass to the next, as Lloyd iterations do):

- *hard*: the unpruned hard pass (``InMemoryRows.stats`` at sigma 0, the
  kernel ``block_stats``);
- *pruned hard*: ``InMemoryRows.pruned_stats`` (Hamerly bounds);
- *entmax15* / *softmax*: the unpruned soft pass (``block_stats``);
- *pruned entmax15* / *pruned softmax*: ``InMemoryRows.pruned_soft_stats``
  (the same bounds: a row is one-hot without forming its other distances
  when they clear its own by more than the assignment's reach).

The soft passes run at temperatures given as multiples of the centers'
mean within-cell squared distance per feature (``--sigmas``, default
0.1, 1, 4); the table gives each pass's median time over ``--repeats``
runs, the share of row-center distances it formed, the share of the weight
left soft (not one-hot) and the ratio to the pruned hard pass. Progress goes
to stderr, the table (markdown) to stdout.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numba
import numpy as np
from machine import header, load_1min

import fastrbfkm._kernels as K
from fastrbfkm import RBFKMeans
from fastrbfkm._rows import Bounds, InMemoryRows
from fastrbfkm.datasets import make_blobs


def timed(call, repeats: int) -> tuple[float, object]:
    """Median seconds of ``call()`` over ``repeats`` runs, after one untimed run."""
    out = call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--k", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sigmas", default="0.1,1,4")
    args = parser.parse_args(argv)
    load_before = load_1min()
    X = make_blobs(args.n, centers=4 * args.k, n_features=args.d, random_state=0, dtype=np.float32)[
        0
    ]
    print(f"fitting the centers (k = {args.k})", file=sys.stderr)
    C = RBFKMeans(args.k, assignment="hard", random_state=0).fit(X).cluster_centers_
    rows = InMemoryRows(X, np.empty(0))
    total = args.n * args.k
    spread = rows.inertia(C)[0] / (args.n * args.d)
    lines = []

    def row(name, seconds, formed, soft, base):
        lines.append(
            f"| {name} | {seconds * 1e3:.1f} | {formed:.1%} | {soft} | {seconds / base:.2f} |"
        )

    t_hard, _ = timed(lambda: rows.stats(C, 0.0, K.HARD), args.repeats)
    bounds = rows.new_bounds(args.k)
    t_pruned, out = timed(lambda: rows.pruned_stats(C, bounds), args.repeats)
    row("hard", t_hard, 1.0, "0", t_pruned)
    row("pruned hard", t_pruned, out[-1] / total, "0", t_pruned)
    for factor in (float(s) for s in args.sigmas.split(",")):
        sigma = factor * spread
        for name, mode in (("entmax15", K.ENTMAX15), ("softmax", K.SOFTMAX)):
            print(f"{name} at sigma {sigma:.4g}", file=sys.stderr)
            t_soft, out = timed(
                lambda mode=mode, sigma=sigma: K.block_stats(X, C, rows.w, sigma, mode, True),
                args.repeats,
            )
            soft = f"{out[2][K.SOFT] / args.n:.2%}"
            label = f"{name}, sigma = {factor:g} x spread"
            row(label, t_soft, 1.0, soft, t_pruned)
            own = Bounds(np.zeros(args.n, dtype=np.int32), np.zeros(args.n))
            t_ps, out = timed(
                lambda mode=mode, sigma=sigma, own=own: rows.pruned_soft_stats(C, sigma, mode, own),
                args.repeats,
            )
            row(f"pruned {label}", t_ps, out[-1] / total, soft, t_pruned)
    print(header(numba.threading_layer(), load_before, load_1min()))
    print()
    print(
        f"n = {args.n}, d = {args.d}, k = {args.k}, float32; spread (mean within-cell "
        f"squared distance per feature) = {spread:.4g}; median of {args.repeats} passes."
    )
    print()
    print("| pass | ms | distances formed | weight left soft | time / pruned hard |")
    print("|---|---|---|---|---|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
