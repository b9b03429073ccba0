"""Numba CPU kernels: pure functions on validated, C-contiguous float arrays.

Nothing here validates its input; the public functions in
:mod:`fastrbfkm.functional` do that once, at the boundary.
"""

import functools

import numpy as np

from . import (
    assignment,
    cells,
    entmax,
    pruned,
    scatter,
    seeding,
    softmax,
    sparse,
    transfers,
    update,
)
from .assignment import ENTMAX15, HARD, SOFTMAX
from .chunks import BLOCK_ENTRIES, BLOCK_ROWS, MAX_CHUNKS, MIN_CHUNK_ROWS, PARTIAL_BUDGET
from .compiling import announce_compilation, note_data
from .distances import DIRECT_MAX
from .forks import serial_after_fork
from .interrupts import deferring_interrupts
from .memory import guarded
from .sparse import CSR, row_block
from .threads import serial_when_small
from .update import (
    INERTIA,
    N_SUMMARY,
    OBJECTIVE,
    OFF_WINNER_MAX,
    SOFT,
    SUMMARY_MAXIMA,
    SUPPORT,
    SUPPORT_MAX,
    fold_summary,
)

announce_compilation()


# ``size`` gives (rows, multiply-adds per row) of a call.
def _rows_by_centers(X, C, *_):
    return X.shape[0], C.shape[0] * (X.shape[1] + 1)


def _rows_by_columns(R, *_):
    return R.shape[0], 4 * R.shape[1]


def _shape(X) -> tuple[int, int, np.dtype]:
    """``(n, d, dtype)`` of dense or CSR rows."""
    if isinstance(X, CSR):
        return X.indptr.shape[0] - 1, X.n_cols, X.data.dtype
    return X.shape[0], X.shape[1], X.dtype


def _footprint(per_row=lambda k, itemsize: 0, columns=False):
    """A kernel's :func:`~.memory.guarded` footprint: its data, the bytes
    of its results (``per_row(k, itemsize)`` a row and the chunks' partial
    statistics) and of a thread's work arrays, estimated from the shapes of
    its first argument (rows) and second (centers; with ``columns``, the
    first's columns are the centers)."""

    def footprint(X, *args):
        n, d, dtype = _shape(X)
        if columns:
            k, d = d, 0
            what = f"{n} x {k} {dtype}"
        else:
            C = args[0]
            k = C.shape[0]
            what = f"{n} rows of {d} {dtype} features, {k} centers"
        stat = k * (d + 1)
        chunks = max(1, min(MAX_CHUNKS, -(-n // MIN_CHUNK_ROWS), max(2, PARTIAL_BUDGET // stat)))
        block = max(1, min(BLOCK_ROWS, BLOCK_ENTRIES // max(d, 1)))
        results = n * per_row(k, dtype.itemsize) + 8 * chunks * stat
        return what, results, 8 * block * (d + 6 * k)

    return footprint


def _entry(size, kernel, data=True, footprint=None):
    """A parallel kernel as the library calls it: on one thread when the call
    is small (:mod:`.threads`) and in a forked child (:mod:`.forks`), Ctrl-C
    raised when it returns (:mod:`.interrupts`), out of memory explained
    and no BLAS buffer mapped that does not fit (:mod:`.memory`, with the
    kernel's ``footprint``, by default :func:`_footprint`'s), its data
    read-only. With ``data``, its first argument is the data, whose kind a
    compilation then announces (:func:`.compiling.note_data`); without, it
    is not (the centers)."""
    run = deferring_interrupts(serial_after_fork(serial_when_small(size)(kernel), kernel))
    run = guarded(kernel.py_func.__name__, footprint or _footprint())(run)

    @functools.wraps(run)
    def call(X, *args):
        if data:
            note_data(data_kind(X))
        return run(read_only(X), *args)

    return call


def data_kind(X) -> str:
    """``"float32 arrays"``, ``"float64 CSR matrices"``, ...: the kind of input
    as the compile announcement and ``python -m fastrbfkm compile`` name it."""
    if isinstance(X, CSR):
        return f"{X[0].dtype} CSR matrices"
    return f"{X.dtype} arrays"


def read_only(X):
    """A read-only view of an ndarray (the array itself if it is one
    already); a CSR's arrays read-only likewise.

    numba compiles a separate specialization of every kernel for read-only
    arrays: a read-only memmap (``np.load(path, mmap_mode="r")``) took tens
    of seconds of compiling more than the same data in memory. The data a
    kernel reads (its first argument) is always passed read-only instead, so
    both share one specialization."""
    if isinstance(X, CSR):
        return CSR(*(read_only(a) for a in X[:3]), X.n_cols)
    if isinstance(X, np.ndarray) and X.flags.writeable:
        X = X.view()
        X.flags.writeable = False
    return X


def take_rows(X, index) -> np.ndarray:
    """Rows ``X[index]`` of dense or CSR X as a new dense array."""
    if isinstance(X, CSR):
        out = np.zeros((len(index), X.shape[1]), dtype=X.dtype)
        sparse.dense_rows(X, np.asarray(index, dtype=np.int64), out)
        return out
    return np.asarray(X)[index]  # one copy, a plain array (a memmap's rows too)


_labels_and_distances = _footprint(lambda k, itemsize: 4 + itemsize)
_n_by_k = _footprint(lambda k, itemsize: k * itemsize)
_n_by_k_columns = _footprint(lambda k, itemsize: k * itemsize, columns=True)

hard_assign = _entry(_rows_by_centers, assignment.hard_assign, footprint=_labels_and_distances)
responsibilities = _entry(_rows_by_centers, assignment.responsibilities, footprint=_n_by_k)
assign_logits = _entry(_rows_by_columns, assignment.assign_logits, footprint=_n_by_k_columns)
squared_distances = _entry(_rows_by_centers, assignment.squared_distances, footprint=_n_by_k)
_block_pass = _entry(_rows_by_centers, update.block_pass)
pruned_hard_stats = _entry(_rows_by_centers, pruned.pruned_hard_stats)
pruned_soft_stats = _entry(_rows_by_centers, pruned.pruned_soft_stats)
own_sqdists = _entry(
    lambda X, C, labels: (X.shape[0], X.shape[1]),  # one distance a row
    pruned.own_sqdists,
    footprint=_footprint(lambda k, itemsize: 8),
)
_centers_only = _footprint(lambda k, itemsize: 8)
nearest_gaps = _entry(
    lambda P, norms: _rows_by_centers(P, P),
    pruned.nearest_gaps,
    data=False,
    footprint=lambda P, *args: _centers_only(P, P),
)
nearest_centers = _entry(
    lambda P, norms, q: _rows_by_centers(P, P),
    pruned.nearest_centers,
    data=False,
    footprint=lambda P, norms, q: _centers_only(P, P),
)


def block_stats(X, C, w, sigma, mode, with_stats):
    """``(N, S, summary)`` of one pass at ``sigma`` for the assignment
    ``mode`` (:func:`~.update.block_pass`): N and S float64, zeros when
    ``with_stats`` is False (their accumulation skipped)."""
    no_rows = np.empty((0, 0), dtype=C.dtype)
    return _block_pass(X, C, w, float(sigma), int(mode), bool(with_stats), no_rows)


def stats_and_reconstruction(X, C, w, sigma, mode):
    """:func:`block_stats` (with the statistics) and, in the same pass, the
    reconstruction ``x_hat_i = sum_k r_ik c_k`` of every row of the dense
    X, ``(n, d)`` in C's dtype, without forming the rows' distances and
    assignments a second time: ``(N, S, summary, x_hat)``."""
    xhat = np.empty(X.shape, dtype=C.dtype)
    N, S, summary = _block_pass(X, C, w, float(sigma), int(mode), True, xhat)
    return N, S, summary, xhat


_scatters = _entry(
    lambda X, C, w, sigma, mode, chosen, cells: (
        X.shape[0],
        C.shape[0] * (X.shape[1] + 1) + (2 if cells else 1) * chosen.shape[0] * X.shape[1] ** 2,
    ),
    scatter.scatters,
)


def center_scatter(X, C, w, sigma, mode, chosen):
    """``(N, A)`` for the centers ``C[chosen]`` (distinct), with
    responsibilities over all of C: ``N`` ``(m,)`` and the scatter matrices
    ``A`` ``(m, d, d)``, float64 (dense X only;
    :func:`fastrbfkm._kernels.scatter.scatters`)."""
    N, _, A, _, _ = _scatters(X, C, w, sigma, mode, chosen, False)
    return N, A


def scatter_and_cells(X, C, w, sigma, mode):
    """``(N, S, A, N_cells, A_cells)`` for every center in one pass:
    :func:`center_scatter` at ``sigma`` with the soft step's weighted sums
    ``S = sum_i w_i r_ij x_i`` (``(k, d)``, float64), and at ``mode = HARD``
    (the scatter of each center's Voronoi cell), the rows' distances formed
    once (the annealing's split candidates read all of it, at temperatures
    where most rows are one-hot)."""
    return _scatters(X, C, w, sigma, mode, np.arange(C.shape[0]), True)


scatter_apply = _entry(
    lambda X, C, w, sigma, mode, chosen, hard, V, labels: (
        X.shape[0],
        C.shape[0] * (X.shape[1] + 1) + 2 * chosen.shape[0] * X.shape[1],
    ),
    scatter.scatter_apply,
)
cell_summary = _entry(
    lambda X, C, w, scatter: (
        X.shape[0],
        C.shape[0] * (X.shape[1] + 1) + (X.shape[1] ** 2 if scatter else 0),
    ),
    cells.cell_summary,
)


def removal_costs(X, C, w):
    """Per center, the rise in weighted inertia if it were removed and its
    rows went to their second-nearest center (float64, ``(k,)``; zeros for
    k = 1): the costs of :func:`~.cells.cell_summary`."""
    return cell_summary(X, C, w, False)[0][cells.COSTS]


entmax15_backward = _entry(_rows_by_columns, entmax.entmax15_backward, footprint=_n_by_k_columns)
softmax_backward = _entry(_rows_by_columns, softmax.softmax_backward, footprint=_n_by_k_columns)
kmeans_plusplus = _entry(
    lambda X, w, mu, norms, seeds, first, last, uniforms, closest: (
        X.shape[0],
        (last - first) * uniforms.shape[1] * X.shape[1],
    ),
    seeding.kmeans_plusplus,
    footprint=lambda X, w, mu, norms, seeds, *args: _footprint(lambda k, i: 8)(X, seeds),
)
_transfer_sweeps = guarded(  # sequential
    "transfer_sweeps",
    lambda X, w, labels, k, *args: _footprint(lambda k, i: 40)(X, np.empty((k, 0))),
)(deferring_interrupts(transfers.transfer_sweeps))
_seeding_norms = guarded(  # sequential, one pass
    "seeding_norms", lambda X: _footprint(lambda k, i: 8)(X, np.empty((1, 0)))
)(deferring_interrupts(seeding.seeding_norms))


@functools.wraps(_seeding_norms)
def seeding_norms(X):
    return _seeding_norms(read_only(X))


@functools.wraps(_transfer_sweeps)
def transfer_sweeps(X, *args):
    return _transfer_sweeps(read_only(X), *args)


__all__ = [
    "CSR",
    "DIRECT_MAX",
    "ENTMAX15",
    "HARD",
    "INERTIA",
    "N_SUMMARY",
    "OBJECTIVE",
    "OFF_WINNER_MAX",
    "SOFT",
    "SOFTMAX",
    "SUMMARY_MAXIMA",
    "SUPPORT",
    "SUPPORT_MAX",
    "assign_logits",
    "block_stats",
    "cell_summary",
    "center_scatter",
    "entmax15_backward",
    "fold_summary",
    "hard_assign",
    "kmeans_plusplus",
    "nearest_centers",
    "nearest_gaps",
    "own_sqdists",
    "pruned_hard_stats",
    "pruned_soft_stats",
    "removal_costs",
    "responsibilities",
    "row_block",
    "scatter_and_cells",
    "scatter_apply",
    "seeding_norms",
    "softmax_backward",
    "squared_distances",
    "stats_and_reconstruction",
    "take_rows",
    "transfer_sweeps",
]
