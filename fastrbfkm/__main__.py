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


def load(path: str, header: bool | None = None) -> np.ndarray:
    """Read a 2-D array of numbers from ``.npy`` (memory-mapped, no pickles: a
    file larger than the working memory is streamed by the fit) or ``.csv``
    (``header``: its first line names the columns; None: it does when one of
    its fields is not a number). Rows and columns in errors count from 1."""
    file = Path(path)
    if not file.exists():
        raise ValueError(f"{path}: no such file")
    if file.suffix == ".npy":
        try:
            X = np.load(file, mmap_mode="r", allow_pickle=False)
        except (ValueError, EOFError, OSError) as exc:  # truncated or not a .npy file
            raise ValueError(f"{path}: not a readable .npy file ({exc})") from None
        skipped = 0
    elif file.suffix == ".csv":
        X, skipped = _load_csv(file, header)
    else:
        raise ValueError(f"{path}: expected a .npy or .csv file")
    if X.dtype.kind not in "biuf":  # dates, durations, records, strings, complex
        raise ValueError(f"{path}: expected real numbers; the file holds {X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"{path}: expected a 2-D array; the file holds shape {X.shape}")
    _check_finite(X, path, skipped)
    return X


def _numbers(line: str) -> bool:
    try:
        [float(field) for field in line.split(",")]
    except ValueError:
        return False
    return True


def _load_csv(file: Path, header: bool | None) -> tuple[np.ndarray, int]:
    """The numbers of a CSV file and the lines skipped before them (a header)."""
    with open(file) as f:
        lines = [line for line in f]
    if not any(line.strip() for line in lines):
        raise ValueError(f"{file}: the file holds no numbers")
    skipped = int(header if header is not None else not _numbers(lines[0]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's own "input contained no data"
            X = np.loadtxt(lines[skipped:], delimiter=",", ndmin=2)
    except ValueError:  # say where, counting lines and columns from 1
        width = len(lines[skipped].split(","))
        for number, line in enumerate(lines[skipped:], start=skipped + 1):
            fields = line.rstrip("\n").split(",")
            if line.strip() and len(fields) != width:
                raise ValueError(
                    f"{file}: line {number} has {len(fields)} columns, line {skipped + 1} "
                    f"has {width}"
                ) from None
            for column, field in enumerate(fields, start=1):
                try:
                    float(field)
                except ValueError:
                    raise ValueError(
                        f"{file}: line {number}, column {column}: {field.strip()!r} is not a number"
                    ) from None
        raise
    if X.size == 0:
        raise ValueError(f"{file}: the file holds no numbers")
    return X, skipped


def _check_finite(X: np.ndarray, path: str, skipped: int) -> None:
    """Raise, naming the first NaN or infinity's row and column (from 1; for a
    CSV file also its line), in blocks of about 64 MiB (a .npy file may be
    larger than the memory)."""
    if X.dtype.kind != "f":
        return
    step = max(1, (64 << 20) // max(1, X.shape[1] * X.itemsize))
    for start in range(0, X.shape[0], step):
        bad = ~np.isfinite(X[start : start + step])
        if bad.any():
            r, c = np.argwhere(bad)[0]
            row = start + int(r) + 1
            where = f"row {row}" + (f" (line {row + skipped})" if path.endswith(".csv") else "")
            value = X[row - 1, c]
            raise ValueError(f"{path}: {where}, column {int(c) + 1} is {value}")


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


def default_verbose(verbose: int | None, stream) -> int:
    """``--verbose`` as given, else a progress line on a terminal and none
    when the output goes to a file or a pipe."""
    if verbose is not None:
        return verbose
    isatty = getattr(stream, "isatty", None)
    return int(bool(isatty and isatty()))


#: What the progress lines of a fit and of the demo show (their --help).
PROGRESS = (
    "progress, one line per temperature: sigma (the temperature, in squared distance), "
    "centers (distinct centers so far), iterations (soft steps at that temperature), "
    "objective (the free energy sum_i w_i [sum_k r_ik D_ik - sigma H(r_i)]: the expected "
    "squared distance minus sigma times the entropy of the responsibilities, so negative "
    "at high temperature and equal to the K-Means inertia once every row is hard), and "
    "soft rows (rows whose responsibilities are not one-hot)"
)


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
    X = load(args.data, args.header)
    km = RBFKMeans(
        args.k,
        assignment=args.assignment,
        sigma=args.sigma,
        record_path=True,
        random_state=args.seed,
        verbose=default_verbose(args.verbose, sys.stdout),
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
        "demo",
        help="cluster a million generated points (annealed fit) and print a summary",
        description="Cluster generated Gaussian blobs with the annealed fit, printing its "
        + PROGRESS
        + ".",
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
    fit.add_argument(
        "--header",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the CSV file's first line names the columns (default: detected, a first line "
        "with a field that is not a number)",
    )
    fit.add_argument("--k", type=int, required=True, help="number of clusters")
    fit.add_argument("--assignment", default="entmax15", choices=["entmax15", "softmax", "hard"])
    fit.add_argument("--sigma", type=parse_sigma, default="auto", help="'auto' or a temperature")
    fit.add_argument("--out", help="write the centers to this .npy file")
    fit.add_argument("--labels", help="write the labels to this .npy file")
    fit.add_argument("--seed", type=int, default=0, help="random seed")
    fit.add_argument(
        "--verbose",
        type=int,
        default=None,
        help="1: " + PROGRESS + "; 0: none (default: 1 on a terminal, 0 otherwise)",
    )
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
