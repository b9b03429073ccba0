"""Command line: ``fastrbfkm {demo,fit,paper,compile} ...`` (or ``python -m
fastrbfkm ...``). Results go to stdout, progress to stderr."""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ._deprecation import renamed_option
from ._model import ASSIGNMENTS, METRICS
from ._warmup import KINDS

if TYPE_CHECKING:
    from .estimator import RBFKMeans

#: What ``python -m fastrbfkm --help`` says first.
DESCRIPTION = (
    "fastrbfkm: K-Means as the zero-temperature limit of an RBF network. Commands: demo "
    "(cluster generated blobs), fit (cluster a .npy or .csv file), paper (reproduce the "
    "paper's tables and figures), compile (compile the kernels ahead of the first fit); "
    "'fastrbfkm COMMAND --help' (or 'python -m fastrbfkm COMMAND --help') for each. Results "
    "go to stdout, progress to stderr."
)

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


@dataclass
class Table:
    """A data file as the fit reads it (:func:`read`)."""

    #: The numbers clustered: the chosen columns.
    X: np.ndarray
    #: The chosen columns' names: a CSV file's header names them, else
    #: ``x<n>`` with ``n`` the column's number in the file, from 1.
    names: list[str]
    #: Every column of every row as the file holds it: a CSV file's header
    #: line (None without one) and data lines, without their line ends; a
    #: .npy file's whole array.
    header_line: str | None = None
    lines: list[str] | None = None
    whole: np.ndarray | None = None
    delimiter: str = ","


def load(
    path: str,
    header: bool | None = None,
    delimiter: str = ",",
    columns: list[int] | None = None,
) -> np.ndarray:
    """Read a 2-D array of numbers from ``.npy`` (memory-mapped, no pickles: a
    file larger than the working memory is streamed by the fit) or ``.csv``
    (``header``: its first line names the columns; None: it does when none of
    its fields is a number; ``delimiter`` between fields; UTF-8, with or
    without a byte-order mark). ``columns``: the columns to keep, counted
    from 0 (None: all). Rows and columns in errors count from 1, as in the
    file."""
    return read(path, header, delimiter, columns).X


def read(
    path: str,
    header: bool | None = None,
    delimiter: str = ",",
    columns: list[int] | None = None,
) -> Table:
    """:func:`load`, with the columns' names and the file's rows as they are
    (for the outputs' header rows and ``--labeled``)."""
    file = Path(path)
    if not file.exists():
        raise ValueError(f"{path}: no such file")
    if file.suffix == ".npy":
        try:
            X = np.load(file, mmap_mode="r", allow_pickle=False)
        except (ValueError, EOFError, OSError) as exc:  # truncated or not a .npy file
            raise ValueError(f"{path}: not a readable .npy file ({exc})") from None
        skipped = 0
        whole = X
        if columns is not None and X.ndim == 2:
            _check_columns(columns, X.shape[1], path)
            X = np.ascontiguousarray(X[:, columns])
        width = X.shape[1] if X.ndim == 2 else 0
        chosen = list(range(width)) if columns is None else columns
        table = Table(X, [f"x{c + 1}" for c in chosen], whole=whole)
    elif file.suffix == ".csv":
        table, skipped = _load_csv(file, header, delimiter, columns)
        X = table.X
    else:
        raise ValueError(f"{path}: expected a .npy or .csv file")
    if X.dtype.kind not in "biuf":  # dates, durations, records, strings, complex
        raise ValueError(f"{path}: expected real numbers; the file holds {X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"{path}: expected a 2-D array; the file holds shape {X.shape}")
    _check_finite(X, path, skipped)
    return table


def _check_columns(columns: list[int], width: int, path) -> None:
    if max(columns) >= width:
        raise ValueError(
            f"{path}: --columns asks for column {max(columns) + 1}; the file has {width}"
        )


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def _load_csv(
    file: Path, header: bool | None, delimiter: str, columns: list[int] | None
) -> tuple[Table, int]:
    """The numbers of a CSV file, its names and lines (:class:`Table`), and
    the lines skipped before them (a header)."""
    with open(file, encoding="utf-8-sig") as f:  # a byte-order mark is not data
        lines = [line for line in f]
    if not any(line.strip() for line in lines):
        raise ValueError(f"{file}: the file holds no numbers")
    width = len(lines[0].split(delimiter))
    if columns is not None:
        _check_columns(columns, width, file)
    wanted = range(width) if columns is None else columns
    if header is None:
        # A header names every column: a first line with numbers in some
        # fields and text in others is data with a bad field, not names.
        first = lines[0].rstrip("\n").split(delimiter)
        numbers = [_is_number(first[c]) for c in wanted]
        header = not any(numbers)
        if not header and not all(numbers):
            column = next(c for c in wanted if not _is_number(first[c])) + 1
            raise ValueError(
                f"{file}: line 1, column {column}: {first[column - 1].strip()!r} is not a "
                "number (a header line names every column; --header to take it as one)"
            )
    skipped = int(header)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # numpy's own "input contained no data"
            X = np.loadtxt(
                lines[skipped:], delimiter=delimiter, ndmin=2, usecols=columns, encoding=None
            )
    except ValueError:  # say where, counting lines and columns from 1
        for number, line in enumerate(lines[skipped:], start=skipped + 1):
            fields = line.rstrip("\n").split(delimiter)
            if line.strip() and len(fields) != width:
                raise ValueError(
                    f"{file}: line {number} has {len(fields)} columns, line 1 has {width}"
                ) from None
            for column in wanted:
                if line.strip() and not _is_number(fields[column]):
                    raise ValueError(
                        f"{file}: line {number}, column {column + 1}: "
                        f"{fields[column].strip()!r} is not a number"
                    ) from None
        raise
    if X.size == 0:
        raise ValueError(f"{file}: the file holds no numbers")
    first = lines[0].rstrip("\r\n").split(delimiter)
    names = [first[c].strip() if header else f"x{c + 1}" for c in wanted]
    # the rows numpy read: neither blank nor a comment (numpy's "#")
    rows = [line.split("#", 1)[0].rstrip() for line in lines[skipped:]]
    rows = [row for row in rows if row.strip()]
    header_line = lines[0].rstrip("\r\n") if header else None
    return Table(X, names, header_line, rows, delimiter=delimiter), skipped


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


#: Output formats by file name extension.
OUTPUT_FORMATS = (".npy", ".csv")


def writable(path: str | None, name: str) -> str | None:
    """``path`` as given, once its folder is known to exist and its extension
    names a format (checked before a fit, not after it)."""
    if path is None:
        return None
    if Path(path).suffix not in OUTPUT_FORMATS:
        raise ValueError(f"{name} {path}: expected a file name ending in .npy or .csv")
    if not Path(path).resolve().parent.is_dir():
        raise ValueError(f"{name} {path}: the folder {Path(path).parent} does not exist")
    return path


def _number_format(dtype: np.dtype) -> str:
    """Integers as such, floats to their full precision."""
    if dtype.kind in "biu":
        return "%d"
    return f"%.{9 if dtype == np.float32 else 17}g"


def save(path: str, array: np.ndarray, names: list[str] | None = None) -> None:
    """Write ``array`` to exactly ``path``: NumPy's binary format for .npy,
    text for .csv (integers as such, floats to their full precision), under
    a header row of the columns' ``names`` when given."""
    if path.endswith(".csv"):
        rows = array.reshape(array.shape[0], -1)
        header = "" if names is None else ",".join(names)
        np.savetxt(
            path, rows, fmt=_number_format(array.dtype), delimiter=",", header=header, comments=""
        )
        return
    with open(path, "wb") as f:
        np.save(f, array)


#: Rows written at a time by :func:`save_labeled` (a .npy input may be larger
#: than the memory).
LABELED_BLOCK = 1 << 16


def save_labeled(path: str, table: Table, labels: np.ndarray) -> None:
    """Write the input's rows with their labels as one more column, named
    ``label``, to exactly ``path``. A .csv file gets every row as the input
    holds it (a CSV input's lines, id columns and all, in its delimiter, its
    header line or ``x1,x2,...`` first; a .npy input's numbers, integers as
    such and floats to full precision); a .npy file gets the clustered
    columns and the label in one array (float64 for float32 rows, whose
    precision would not hold every label)."""
    labels = np.asarray(labels)
    if path.endswith(".npy"):
        X = table.X
        dtype = np.result_type(X.dtype, labels.dtype)
        shape = (X.shape[0], X.shape[1] + 1)
        out = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)
        for start in range(0, X.shape[0], LABELED_BLOCK):
            stop = min(start + LABELED_BLOCK, X.shape[0])
            out[start:stop, :-1] = X[start:stop]
            out[start:stop, -1] = labels[start:stop]
        out.flush()
        del out
        return
    sep = table.delimiter
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        if table.lines is not None:  # a CSV input: its lines as they are
            width = len(table.lines[0].split(sep)) if table.lines else 0
            first = table.header_line
            if first is None:
                first = sep.join(f"x{c + 1}" for c in range(width))
            f.write(f"{first}{sep}label\n")
            for line, label in zip(table.lines, labels.tolist(), strict=True):
                f.write(f"{line}{sep}{label}\n")
            return
        whole = table.whole
        names = [f"x{c + 1}" for c in range(whole.shape[1])]
        f.write(",".join([*names, "label"]) + "\n")
        for start in range(0, whole.shape[0], LABELED_BLOCK):
            stop = min(start + LABELED_BLOCK, whole.shape[0])
            text = io.StringIO()
            np.savetxt(text, whole[start:stop], fmt=_number_format(whole.dtype), delimiter=",")
            rows = text.getvalue().splitlines()
            for line, label in zip(rows, labels[start:stop].tolist(), strict=True):
                f.write(f"{line},{label}\n")


def parse_columns(text: str) -> list[int]:
    """``--columns``: column numbers from 1 and ranges, as ``2,4-6``; counted
    from 0 on return."""
    columns: list[int] = []
    try:
        for part in text.split(","):
            first, _, last = part.partition("-")
            lo, hi = int(first), int(last or first)
            if lo < 1 or hi < lo:
                raise ValueError
            columns.extend(range(lo - 1, hi))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--columns must be column numbers from 1 and ranges, such as 2,4-6; got {text!r}"
        ) from None
    if len(set(columns)) != len(columns):
        raise argparse.ArgumentTypeError(f"--columns names a column twice: {text!r}")
    return columns


def default_verbose(verbose: int | None, stream) -> int:
    """``--verbose`` as given, else progress lines when ``stream`` (stderr,
    where they go) is a terminal and none when it goes to a file or a pipe."""
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


def parse_n_clusters(text: str):
    """``fit --n-clusters``: a positive integer or 'auto'."""
    if text == "auto":
        return text
    try:
        k = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            "--n-clusters must be 'auto' or a positive integer"
        ) from None
    if k < 1:
        raise argparse.ArgumentTypeError("--n-clusters must be 'auto' or a positive integer")
    return k


#: The options each command took under another name before 0.2, new name by
#: old: still taken, hidden from ``--help``, with a ``FutureWarning``
#: (:func:`fastrbfkm._deprecation.renamed_option`).
OLD_OPTIONS = {
    "demo": {
        "--n": "--n-samples",
        "--k": "--n-clusters",
        "--d": "--n-features",
        "--seed": "--random-state",
    },
    "fit": {"--k": "--n-clusters", "--seed": "--random-state"},
}

#: The defaults of the renamed options (which are parsed without one, so
#: that an option given under both names is caught): None is required.
RENAMED_DEFAULTS = {
    "demo": {"n_samples": 1_000_000, "n_clusters": 8, "n_features": 2, "random_state": 0},
    "fit": {"n_clusters": None, "random_state": 0},
}


def dest(option: str) -> str:
    """The attribute argparse stores an option in: ``--n-clusters``, ``n_clusters``."""
    return option.lstrip("-").replace("-", "_")


def add_renamed(parser: argparse.ArgumentParser, command: str, option: str, **kwargs) -> None:
    """``option`` of ``command``, and its old name (:data:`OLD_OPTIONS`), hidden
    from ``--help``, with the same ``kwargs``; neither has a default."""
    parser.add_argument(option, default=argparse.SUPPRESS, **kwargs)
    for old, new in OLD_OPTIONS[command].items():
        if new == option:
            kwargs = {**kwargs, "help": argparse.SUPPRESS}
            kwargs.pop("metavar", None)
            parser.add_argument(old, dest=f"old_{dest(new)}", default=argparse.SUPPRESS, **kwargs)


def take_renamed(parser: argparse.ArgumentParser, command: str, args: argparse.Namespace) -> None:
    """The renamed options' values in ``args`` under their new names: an old
    name's with a ``FutureWarning``, else the default (a usage error where
    both names, or neither of a required option's, were given)."""
    for old, new in OLD_OPTIONS[command].items():
        if not hasattr(args, f"old_{dest(new)}"):
            continue
        value = getattr(args, f"old_{dest(new)}")
        delattr(args, f"old_{dest(new)}")
        if hasattr(args, dest(new)):
            parser.error(f"{old} is the old name of {new}: give {new} only")
        renamed_option(command, old, new)
        setattr(args, dest(new), value)
    for name, default in RENAMED_DEFAULTS[command].items():
        if not hasattr(args, name):
            if default is None:
                parser.error(f"the following arguments are required: --{name.replace('_', '-')}")
            setattr(args, name, default)


def cmd_fit(args: argparse.Namespace) -> None:
    from sklearn import config_context

    from ._streaming import streams
    from .estimator import RBFKMeans

    writable(args.out, "--out")
    writable(args.labels, "--labels")
    writable(args.labeled, "--labeled")
    table = read(args.data, args.header, args.delimiter, args.columns)
    X = table.X
    km = RBFKMeans(
        args.n_clusters,
        max_clusters=args.max_clusters,
        assignment=args.assignment,
        sigma=args.sigma,
        n_init=args.n_init,
        max_iter=args.max_iter,
        tol=args.tol,
        record_path=True,
        random_state=args.random_state,
        verbose=default_verbose(args.verbose, sys.stderr),
        backend=args.backend,
        metric=args.metric,
    )
    start = time.perf_counter()
    # progress on stderr: stdout holds the results, for a file or a pipe
    with config_context(working_memory=args.working_memory), contextlib.redirect_stdout(sys.stderr):
        streamed = streams(X)
        try:
            km.fit(X)
        except (ValueError, TypeError) as exc:  # about this file's data
            raise type(exc)(f"{args.data}: {exc}") from None
    elapsed = time.perf_counter() - start
    k = args.n_clusters
    if k == "auto":
        most = km.phase_diagram_.max_clusters
        k = f"{km.n_clusters_} (auto: the count that lasted longest, annealing up to {most})"
    print(
        f"fastrbfkm fit: {X.shape[0]} points, {X.shape[1]} features, n_clusters={k}, "
        f"assignment={args.assignment}, sigma={args.sigma}"
    )
    if streamed:
        print(f"data         streamed from disk ({X.nbytes / 2**20:.0f} MiB > working memory)")
    print(summary(km, elapsed))
    if args.out:
        save(args.out, km.cluster_centers_, table.names)
        print(f"centers      -> {args.out}")
    if args.labels:
        save(args.labels, km.labels_, ["label"])
        print(f"labels       -> {args.labels}")
    if args.labeled:
        save_labeled(args.labeled, table, km.labels_)
        print(f"rows, labels -> {args.labeled}")


def cmd_demo(args: argparse.Namespace) -> None:
    from .datasets import make_blobs
    from .estimator import RBFKMeans

    X, y = make_blobs(
        args.n_samples,
        centers=args.n_clusters,
        n_features=args.n_features,
        cluster_std=1.0,
        random_state=args.random_state,
        dtype=np.float32,
    )
    print(
        f"fastrbfkm demo: {args.n_samples} points in {args.n_features}-D from "
        f"{args.n_clusters} Gaussian blobs (float32); entmax15 annealing from above the "
        "critical temperature"
    )
    km = RBFKMeans(args.n_clusters, record_path=True, random_state=args.random_state, verbose=1)
    start = time.perf_counter()
    with contextlib.redirect_stdout(sys.stderr):  # progress on stderr, as fit's
        km.fit(X)
    elapsed = time.perf_counter() - start
    print(summary(km, elapsed))
    path = km.path_
    first = int(np.argmax(path.n_active > 1))
    print(
        f"first split  at temperature {path.sigmas[first]:.3g}: hotter, all {args.n_clusters} "
        "centers "
        "sat on the data's mean; then they split off one group after another as it cooled"
    )
    truth = np.array([X[y == j].mean(axis=0) for j in range(args.n_clusters)])
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


def cmd_compile(args: argparse.Namespace) -> None:
    from ._warmup import compile_kernels

    print(
        "fastrbfkm compile: compiling the kernels for every kind of input "
        "(from an empty cache about 2 minutes on 2 quiet cores, 4-7 on busy ones; seconds "
        "when they are cached), a line as each kernel is compiled and each group is done",
        flush=True,
    )
    start = time.perf_counter()
    compile_kernels(tuple(args.kinds), report=lambda line: print(line, flush=True))
    print(f"done in {time.perf_counter() - start:.1f} s")
    installed = installed_elsewhere()
    if installed is not None:
        # numba caches beside the source: the installed copy needs its own
        import subprocess
        import tempfile

        print(
            f"this folder's fastrbfkm ({Path(__file__).parent}) is not the installed one "
            f"({installed}): compiling that too",
            flush=True,
        )
        with tempfile.TemporaryDirectory() as elsewhere:  # where no source folder shadows it
            subprocess.run(
                [sys.executable, "-m", "fastrbfkm", "compile", *args.kinds],
                cwd=elsewhere,
                check=True,
            )


def installed_elsewhere() -> Path | None:
    """The folder of the installed fastrbfkm when the one running is another
    copy (a source folder ahead of site-packages on ``sys.path``, as
    ``python -m`` in a clone's root puts it), else None. An editable install
    runs the source itself."""
    from importlib import metadata

    running = Path(__file__).with_name("__init__.py").resolve()
    # every copy's metadata on sys.path: a clone's root may hold its own
    # (fastrbfkm.egg-info), found first
    for dist in metadata.distributions(name="fastrbfkm"):
        init = Path(dist.locate_file("fastrbfkm/__init__.py"))
        if init.is_file() and init.resolve() != running:
            return init.parent
    return None


class OneLineParser(argparse.ArgumentParser):
    """Usage errors in one line (and exit status 2), not a usage block."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def program() -> str:
    """How the command was called: ``fastrbfkm`` (the console command that
    ``pip install`` puts on the PATH) or ``python -m fastrbfkm``."""
    return "fastrbfkm" if Path(sys.argv[0]).stem == "fastrbfkm" else "python -m fastrbfkm"


def build_parser() -> tuple[OneLineParser, dict[str, OneLineParser]]:
    """The command line's parser, and its commands' parsers by name."""
    parser = OneLineParser(prog=program(), description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    demo = sub.add_parser(
        "demo",
        help="cluster a million generated points (annealed fit) and print a summary",
        description="Cluster generated Gaussian blobs with the annealed fit, printing its "
        + PROGRESS
        + ".",
    )
    add_renamed(demo, "demo", "--n-samples", type=int, help="number of points (default 1000000)")
    add_renamed(
        demo, "demo", "--n-clusters", type=int, help="number of blobs and centers (default 8)"
    )
    add_renamed(demo, "demo", "--n-features", type=int, help="number of features (default 2)")
    add_renamed(demo, "demo", "--random-state", type=int, help="random seed (default 0)")
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
    fit.add_argument(
        "--delimiter", default=",", help="the CSV file's field separator (default ',')"
    )
    fit.add_argument(
        "--columns",
        type=parse_columns,
        default=None,
        help="the columns to cluster, numbered from 1, with ranges: '2-5' leaves out an id "
        "in column 1 (default: all)",
    )
    add_renamed(
        fit,
        "fit",
        "--n-clusters",
        type=parse_n_clusters,
        help="number of clusters, or 'auto': the count that lasts longest over the "
        "annealing's phase transitions (see --max-clusters); required",
    )
    fit.add_argument(
        "--max-clusters",
        type=int,
        default=None,
        help="with --n-clusters auto, the most clusters considered (default 10; give about twice "
        "the count you expect)",
    )
    fit.add_argument("--assignment", default="entmax15", choices=list(ASSIGNMENTS))
    fit.add_argument("--sigma", type=parse_sigma, default="auto", help="'auto' or a temperature")
    fit.add_argument("--n-init", type=int, default=1, help="runs with different seeds (default 1)")
    fit.add_argument(
        "--max-iter", type=int, default=300, help="most hard Lloyd iterations (default 300)"
    )
    fit.add_argument(
        "--tol",
        type=float,
        default=1e-4,
        help="convergence tolerance, relative to the mean feature variance (default 1e-4)",
    )
    fit.add_argument("--out", help="write the centers to this file (.npy or .csv)")
    fit.add_argument("--labels", help="write the labels to this file (.npy or .csv)")
    fit.add_argument(
        "--labeled",
        metavar="FILE",
        help="write the input's rows with a label column added to this file: .csv, every "
        "column of every row as the input holds it, ids too; .npy, the clustered columns "
        "and the label",
    )
    add_renamed(fit, "fit", "--random-state", type=int, help="random seed (default 0)")
    fit.add_argument(
        "--backend",
        default="auto",
        choices=["auto", "cpu", "cuda"],
        help="where the passes run, as the estimator's backend (default auto: the GPU when "
        "one is available and n * d * k is large enough to pay for the copy, else the CPU)",
    )
    fit.add_argument(
        "--metric",
        default="euclidean",
        choices=list(METRICS),
        help="cosine: spherical K-Means, the rows at unit length (default euclidean)",
    )
    fit.add_argument(
        "--verbose",
        type=int,
        default=None,
        help="1: " + PROGRESS + ", on stderr; 0: none (default: 1 when stderr is a "
        "terminal, 0 otherwise)",
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
    compile_ = sub.add_parser(
        "compile",
        help="compile the kernels ahead of the first fit (once per installation)",
        description="Compile the kernels for every kind of input into numba's on-disk "
        "cache, so that no later fit waits on the compiler: in-memory arrays, sparse "
        "matrices, memory-mapped files, dask arrays and the PyTorch layer, float32 and "
        "float64 (kinds whose package is not installed are skipped).",
    )
    compile_.add_argument(
        "kinds",
        nargs="*",
        metavar="KIND",
        help="the kinds to compile (default: all): " + ", ".join(KINDS),
    )
    return parser, {"demo": demo, "fit": fit, "paper": paper, "compile": compile_}


def main(argv: list[str] | None = None) -> int:
    """The command line: ``fastrbfkm COMMAND ...`` or ``python -m fastrbfkm
    COMMAND ...``; returns the exit status."""
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    if args.command in OLD_OPTIONS:
        take_renamed(commands[args.command], args.command, args)
    if args.command == "demo" and args.quick:
        args.n_samples, args.n_clusters = 20_000, 4
    if args.command == "demo" and (
        args.n_clusters < 1 or args.n_features < 1 or args.n_samples < args.n_clusters
    ):
        parser.error(
            "--n-samples, --n-clusters and --n-features must be positive, with --n-samples "
            "at least --n-clusters"
        )
    if args.command == "compile":
        unknown = [kind for kind in args.kinds if kind not in KINDS]
        if unknown:
            parser.error(f"unknown kind {unknown[0]!r}; the kinds are {', '.join(KINDS)}")
        args.kinds = args.kinds or list(KINDS)
    if args.command == "fit":
        if not (np.isfinite(args.working_memory) and args.working_memory > 0):
            parser.error("--working-memory must be a finite positive number of MiB")
        if not args.delimiter or args.delimiter in '\n\r"':
            parser.error(f"--delimiter must be a field separator; got {args.delimiter!r}")
        for name in ("n_init", "max_iter"):
            if getattr(args, name) < 1:
                parser.error(f"--{name.replace('_', '-')} must be a positive integer")
        if not (np.isfinite(args.tol) and args.tol >= 0):
            parser.error("--tol must be a finite number >= 0")
    try:
        run = {"demo": cmd_demo, "fit": cmd_fit, "paper": cmd_paper, "compile": cmd_compile}
        run[args.command](args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130  # 128 + SIGINT, as shells report it
    return 0


if __name__ == "__main__":
    sys.exit(main())
