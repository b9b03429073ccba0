"""Command line: ``python -m fastrbfkm {demo,fit} ...``."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .estimator import RBFKMeans

# scikit-learn, numba and the estimator are imported by the commands that fit,
# not here: ``--help`` and argument errors answer without them.


def summary(km: RBFKMeans, elapsed: float) -> str:
    """A few lines on a fitted estimator."""
    lines = [
        f"inertia      {km.inertia_:.8g}",
        f"iterations   {km.n_iter_}",
    ]
    if km.path_ is not None:
        lines.append(
            f"temperatures {len(km.path_)} (sigma {km.path_.sigmas[0]:.3g} -> "
            f"{km.path_.sigmas[-1]:.3g}; critical {km.sigma_critical_ or float('nan'):.3g})"
        )
    lines.append(f"final sigma  {km.sigma_:g}")
    lines.append(f"time         {elapsed:.2f} s")
    return "\n".join(lines)


def load(path: str) -> np.ndarray:
    """Read a 2-D array of numbers from ``.npy`` (memory-mapped, no pickles: a
    file larger than the working memory is streamed by the fit) or ``.csv``."""
    file = Path(path)
    if not file.exists():
        raise ValueError(f"{path}: no such file")
    if file.suffix == ".npy":
        try:
            X = np.load(file, mmap_mode="r", allow_pickle=False)
        except (ValueError, EOFError, OSError) as exc:  # truncated or not a .npy file
            raise ValueError(f"{path}: not a readable .npy file ({exc})") from None
    elif file.suffix == ".csv":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's own "input contained no data"
            X = np.loadtxt(file, delimiter=",", ndmin=2)
        if X.size == 0:
            raise ValueError(f"{path}: the file holds no numbers")
    else:
        raise ValueError(f"{path}: expected a .npy or .csv file")
    if X.dtype.kind not in "biuf":  # dates, durations, records, strings, complex
        raise ValueError(f"{path}: expected real numbers; the file holds {X.dtype}")
    return X


def writable(path: str | None, name: str) -> str | None:
    """``path`` as given, once its folder is known to exist (checked before a
    fit, not after it)."""
    if path is not None and not Path(path).resolve().parent.is_dir():
        raise ValueError(f"{name} {path}: the folder {Path(path).parent} does not exist")
    return path


def save(path: str, array: np.ndarray) -> None:
    """Write ``array`` in .npy format to exactly ``path`` (``np.save`` would
    append ".npy" to any other name)."""
    with open(path, "wb") as f:
        np.save(f, array)


def parse_sigma(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("--sigma must be 'auto' or a number") from None


def cmd_fit(args: argparse.Namespace) -> None:
    from sklearn import config_context

    from ._streaming import streams
    from .estimator import RBFKMeans

    writable(args.out, "--out")
    writable(args.labels, "--labels")
    X = load(args.data)
    km = RBFKMeans(
        args.k,
        assignment=args.assignment,
        sigma=args.sigma,
        record_path=True,
        random_state=args.seed,
        verbose=args.verbose,
    )
    start = time.perf_counter()
    with config_context(working_memory=args.working_memory):
        streamed = streams(X)
        km.fit(X)
    elapsed = time.perf_counter() - start
    print(
        f"fastrbfkm fit: {X.shape[0]} points, {X.shape[1]} features, k={args.k}, "
        f"assignment={args.assignment}, sigma={args.sigma}"
    )
    if streamed:
        print(f"data         streamed from disk ({X.nbytes / 2**20:.0f} MiB > working memory)")
    print(summary(km, elapsed))
    if args.out:
        save(args.out, km.cluster_centers_)
        print(f"centers      -> {args.out}")
    if args.labels:
        save(args.labels, km.labels_)
        print(f"labels       -> {args.labels}")


def cmd_demo(args: argparse.Namespace) -> None:
    from .datasets import make_blobs
    from .estimator import RBFKMeans

    X, y = make_blobs(
        args.n,
        centers=args.k,
        n_features=args.d,
        cluster_std=1.0,
        random_state=args.seed,
        dtype=np.float32,
    )
    print(
        f"fastrbfkm demo: {args.n} points in {args.d}-D from {args.k} Gaussian blobs "
        f"(float32); entmax15 annealing from above the critical temperature"
    )
    km = RBFKMeans(args.k, record_path=True, random_state=args.seed, verbose=1)
    start = time.perf_counter()
    km.fit(X)
    elapsed = time.perf_counter() - start
    print(summary(km, elapsed))
    path = km.path_
    first = int(np.argmax(path.n_active > 1))
    pair = km.sigma_critical_ * np.sqrt(2 / args.k)  # 2 sqrt(2) lambda_max: a pair of centers
    print(
        f"first split  at sigma {path.sigmas[first]:.3g} (all {args.k} centers on the mean "
        f"are unstable below {km.sigma_critical_:.3g}, a pair below {pair:.3g})"
    )
    truth = np.array([X[y == j].mean(axis=0) for j in range(args.k)])
    gaps = np.linalg.norm(truth[:, None] - km.cluster_centers_[None], axis=2).min(axis=1)
    print(
        "distance from each blob's mean to the nearest center:",
        np.array2string(np.sort(gaps), precision=3),
    )


def cmd_paper(args: argparse.Namespace) -> None:
    from .paper import run_paper

    start = time.perf_counter()
    run_paper(args.out, quick=args.quick)
    print(f"done in {time.perf_counter() - start:.1f} s")


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line (and exit status 2), not a usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m fastrbfkm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    demo = sub.add_parser(
        "demo", help="cluster a million generated points (annealed fit) and print a summary"
    )
    demo.add_argument("--n", type=int, default=1_000_000, help="number of points")
    demo.add_argument("--k", type=int, default=8, help="number of blobs and centers")
    demo.add_argument("--d", type=int, default=2, help="number of features")
    demo.add_argument("--seed", type=int, default=0, help="random seed")
    demo.add_argument(
        "--quick", action="store_true", help="small data (20000 points, 4 blobs): seconds"
    )
    fit = sub.add_parser("fit", help="cluster a .npy or .csv file")
    fit.add_argument("data", help="a 2-D array: .npy (no pickles) or .csv")
    fit.add_argument("--k", type=int, required=True, help="number of clusters")
    fit.add_argument("--assignment", default="entmax15", choices=["entmax15", "softmax", "hard"])
    fit.add_argument("--sigma", type=parse_sigma, default="auto", help="'auto' or a temperature")
    fit.add_argument("--out", help="write the centers to this .npy file")
    fit.add_argument("--labels", help="write the labels to this .npy file")
    fit.add_argument("--seed", type=int, default=0, help="random seed")
    fit.add_argument("--verbose", type=int, default=0, help="progress over temperatures")
    fit.add_argument(
        "--working-memory",
        type=float,
        default=1024,
        metavar="MIB",
        help="memory the fit may use for the data: a larger .npy is streamed from disk in "
        "blocks of this size (default 1024)",
    )
    paper = sub.add_parser("paper", help="reproduce the paper's results: tables and figures")
    paper.add_argument("--out", required=True, help="folder for results.md, results.csv, PNGs")
    paper.add_argument("--quick", action="store_true", help="small data: under a minute")
    args = parser.parse_args(argv)
    if args.command == "demo" and args.quick:
        args.n, args.k = 20_000, 4
    if args.command == "demo" and (args.k < 1 or args.d < 1 or args.n < args.k):
        parser.error("--n, --k and --d must be positive, with --n at least --k")
    if args.command == "fit" and not args.working_memory > 0:
        parser.error("--working-memory must be a positive number of MiB")
    try:
        {"demo": cmd_demo, "fit": cmd_fit, "paper": cmd_paper}[args.command](args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT, as shells report it
    return 0


if __name__ == "__main__":
    sys.exit(main())
