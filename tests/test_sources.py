"""Every pass on every rows source: in memory, streamed from a file, over dask
chunks and on the device (numba's CUDA simulator unless a GPU is used, see
conftest.py). Each source must give the in-memory source's results, or
refuse the pass with an error that says so."""

import numpy as np
import pytest

from fastrbfkm import _kernels as K
from fastrbfkm._axes import largest_variance, principal
from fastrbfkm._backend import open_rows
from fastrbfkm._rows import (
    CellInertiaRows,
    HostRows,
    IndexedRows,
    InMemoryRows,
    PrunedRows,
    Rows,
    annealing_sample,
    hard_passes,
    soft_passes,
)
from fastrbfkm._streaming import StreamedRows

from .helpers import make_problem, tolerance

N, D, k = 37, 3, 4

#: Every pass of the Rows interface and of its capabilities, as a call on a
#: source with centers C.
PASSES = {
    "moments": lambda rows, C: rows.moments(),
    "stats": lambda rows, C: rows.stats(C, 0.7, K.ENTMAX15),
    # a run's passes: three at a cold temperature (pruned after the first
    # where the source prunes), equal to the rows' own passes to rounding
    "soft_passes": lambda rows, C: (
        lambda run: [run.stats(C, 0.05, K.ENTMAX15) for _ in range(3)][-1]
    )(soft_passes(rows)),
    "hard_passes": lambda rows, C: (lambda run: (*run.stats(C), run.inertia(C)))(
        hard_passes(rows, k)
    ),
    "scatter": lambda rows, C: rows.scatter(C, 0.7, K.SOFTMAX),
    "scatter_and_cells": lambda rows, C: rows.scatter_and_cells(C, 0.7, K.ENTMAX15),
    "principal": lambda rows, C: principal(rows, C, 0.7, K.ENTMAX15)[:2],  # axes: up to sign
    "largest_variance": lambda rows, C: largest_variance(rows, rows.moments()),
    "cell_summary": lambda rows, C: (
        lambda s: (s.costs, s.mass, s.scatter, rows.cell_summary(C, False).mass)
    )(rows.cell_summary(C, True)),
    "farthest": lambda rows, C: tuple(vars(rows.farthest(C, 3)).values()),
    "inertia": lambda rows, C: rows.inertia(C),
    "cell_inertia": lambda rows, C: rows.cell_inertia(C),
    "prunes": lambda rows, C: rows.prunes(64),
    "new_bounds": lambda rows, C: rows.new_bounds(k).lower.shape,
    "pruned_stats": lambda rows, C: rows.pruned_stats(C, rows.new_bounds(k))[:4],
    "farthest_in_cells": lambda rows, C: tuple(
        vars(rows.farthest_in_cells(C, 3, rows.labels(C))).values()
    ),
    "pruned_soft_stats": lambda rows, C: rows.pruned_soft_stats(
        C, 0.05, K.ENTMAX15, rows.new_bounds(k)
    )[:3],
    "oversample": lambda rows, C: rows.oversample(C, 0.05, 11),
    "draw": lambda rows, C: rows.draw(5, 11),
    "draw_weighted": lambda rows, C: rows.draw_weighted(5, 11),
    "sample": lambda rows, C: (
        annealing_sample(rows, 5, 11).draw(5, 0),
        annealing_sample(rows, 5, 11).weight,
    ),
    "assign": lambda rows, C: rows.assign(C),
    "transfers": lambda rows, C: rows.transfers(C, 20),
    "initial_centers": lambda rows, C: rows.initial_centers(k, C, np.random.default_rng(0)),
    "host_weights": lambda rows, C: rows.host_weights(),
    "take": lambda rows, C: rows.take(np.array([3, 0, 7, 3])),
    "nearest": lambda rows, C: rows.nearest(C),
    "greedy_seeds": lambda rows, C: (
        rows.greedy_seeds(np.random.default_rng(0).random((3, 2))),
        rows.greedy_seeds(np.random.default_rng(1).random((3, 2)), np.array([0, 5, 9, 20, 30])),
    ),
    "labels": lambda rows, C: rows.labels(C),
    "squared_distances": lambda rows, C: rows.squared_distances(C),
    "distances": lambda rows, C: rows.distances(C),
    "responsibilities": lambda rows, C: rows.responsibilities(C, 0.7, K.ENTMAX15),
    "total_inertia": lambda rows, C: rows.total_inertia(C),
    "batch": lambda rows, C: rows.batch(6, np.random.default_rng(5)),
    "largest_magnitude": lambda rows, C: rows.largest_magnitude(),
    "as_given": lambda rows, C: rows.as_given(),
}

#: Sources in chunks: a mini-batch is one chunk (checked below), not drawn rows.
CHUNKED = {"dask": {"batch"}}
#: The capabilities beside the core (mixins of :mod:`fastrbfkm._rows`), each
#: with its passes: a source has all of them (an instance of the mixin) or
#: none (no such method). The seeding primitives of rows that can be taken
#: by index (the others seed with k-means|| over their passes); the pruned
#: passes of dense rows in memory (bounds per row); the cells' inertia of
#: the sources of block folds (the device has no such pass); X itself in
#: host memory, read in order for the transfers and value by value for the
#: largest magnitude (the functional API's underflow check).
CAPABILITIES = {
    IndexedRows: {"host_weights", "take", "nearest", "greedy_seeds"},
    PrunedRows: {
        "prunes",
        "new_bounds",
        "pruned_stats",
        "pruned_soft_stats",
        "farthest_in_cells",
    },
    CellInertiaRows: {"cell_inertia"},
    HostRows: {"as_given", "largest_magnitude", "transfers"},
}


#: Algorithms over a source's passes (functions, not methods), tested on
#: every source as the passes are.
ALGORITHMS = {"principal", "largest_variance", "sample", "soft_passes", "hard_passes"}


def test_every_pass_of_the_interface_is_tested():
    """PASSES holds every public method of the core and of each capability."""
    methods = {
        name
        for cls in (Rows, *CAPABILITIES)
        for name, f in vars(cls).items()
        if callable(f) and name[0] != "_"
    }
    assert (methods - {"check_centers", "like_input"}) | ALGORITHMS == set(PASSES)
    for capability, passes in CAPABILITIES.items():
        assert set(capability.__abstractmethods__) == passes, capability.__name__


def open_source(kind, X, w, tmp_path) -> Rows:
    if kind == "memory":
        return InMemoryRows(X, w)
    if kind == "sparse":
        from scipy import sparse

        return open_rows(sparse.csr_matrix(X), w if w.size else None, "cpu", fit=True)
    if kind == "streamed":
        np.save(tmp_path / "X.npy", X)
        return StreamedRows(np.load(tmp_path / "X.npy", mmap_mode="r"), w, block_rows=10)
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        return open_rows(da.from_array(X, chunks=10), w if w.size else None, "cpu", fit=True)
    from fastrbfkm import cuda

    if not (cuda.is_available() or cuda.simulator_enabled()):
        pytest.skip("neither a CUDA GPU nor the CUDA simulator")
    rows = open_rows(X, w if w.size else None, "cuda", n_clusters=k)
    assert type(rows).__name__ == "DeviceRows"
    return rows


def host(value):
    if hasattr(value, "compute"):
        value = value.compute()
    if hasattr(value, "copy_to_host"):
        value = value.copy_to_host()
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("unit", [False, True], ids=["weighted", "unit"])
@pytest.mark.parametrize("kind", ["streamed", "dask", "device"])
def test_every_pass_on_every_source(kind, unit, tmp_path):
    X, C, w = make_problem(N, D, k, seed=2)
    w = np.empty(0) if unit else w
    reference = InMemoryRows(X, w)
    rows = open_source(kind, X, w, tmp_path)
    assert (rows.n, rows.d, rows.dtype) == (N, D, X.dtype)
    assert rows.weight == pytest.approx(reference.weight, rel=1e-14)
    for name, run in PASSES.items():
        owner = [cap for cap, passes in CAPABILITIES.items() if name in passes]
        if owner and not isinstance(rows, owner[0]):
            assert not hasattr(rows, name), name  # the pass does not exist there
            continue
        if name in CHUNKED.get(kind, ()):
            got, weights = run(rows, C)
            start = int(np.flatnonzero((X == got[0]).all(axis=1))[0])
            np.testing.assert_array_equal(got, X[start : start + 10])  # chunks of 10 rows
            np.testing.assert_array_equal(weights, w[start : start + 10] if w.size else w)
            continue
        got, want = host(run(rows, C)), host(run(reference, C))
        assert len(got) == len(want), name
        for a, b in zip(got, want, strict=True):
            if a is None and name == "scatter_and_cells":
                continue  # the soft sums: formed where the pass is one kernel
            a, b = np.asarray(host(a)[0]), np.asarray(b)
            assert a.shape == b.shape, name
            scale = max(1.0, float(np.abs(b).max())) if b.size else 1.0
            rtol = tolerance(X.dtype)
            np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=name)


#: The capabilities of each source (the table of docs/conventions.md).
HAS = {
    "memory": {IndexedRows, PrunedRows, CellInertiaRows, HostRows},
    "sparse": {IndexedRows, CellInertiaRows, HostRows},
    "streamed": {CellInertiaRows},
    "dask": {CellInertiaRows},
    "device": {IndexedRows},
}


@pytest.mark.parametrize("kind", list(HAS))
def test_a_source_has_a_capability_exactly_when_it_runs_its_passes(kind, tmp_path):
    """A source that is an instance of a capability's mixin runs every pass
    of it (none refused); a source that is not has none of its methods."""
    X, C, w = make_problem(N, D, k, seed=5)
    rows = open_source(kind, X, w, tmp_path)
    assert {cap for cap in CAPABILITIES if isinstance(rows, cap)} == HAS[kind]
    for capability, passes in CAPABILITIES.items():
        for name in sorted(passes):
            if isinstance(rows, capability):
                assert PASSES[name](rows, C) is not None, name
            else:
                assert not hasattr(rows, name), name


@pytest.mark.parametrize("kind", ["memory", "streamed", "dask", "device"])
def test_cell_summary_gives_the_cells_inertia_where_the_source_does(kind, tmp_path):
    X, C, w = make_problem(N, D, k, seed=4)
    rows = open_source(kind, X, w, tmp_path)
    for scatter in (True, False):
        cells = rows.cell_summary(C, scatter).cells
        if not isinstance(rows, CellInertiaRows):
            assert cells is None
        else:
            want = rows.cell_inertia(C)
            np.testing.assert_allclose(cells, want, rtol=tolerance(X.dtype), atol=1e-12)
            assert cells.sum() == pytest.approx(rows.inertia(C)[0], rel=tolerance(X.dtype))


@pytest.mark.parametrize("init", ["k-means++", "random"])
@pytest.mark.parametrize("kind", ["streamed", "dask", "device"])
def test_initial_centers_are_rows_of_x(kind, init, tmp_path):
    """Streamed and dask sources seed with k-means|| and the weighted draw;
    the device draws the same rows as the in-memory source."""
    X, _, w = make_problem(N, D, k, seed=3)
    rows = open_source(kind, X, w, tmp_path)
    C = rows.initial_centers(k, init, np.random.default_rng(1))
    assert C.shape == (k, D)
    assert all((X == c).all(axis=1).any() for c in C)
    if kind == "device":
        want = InMemoryRows(X, w).initial_centers(k, init, np.random.default_rng(1))
        np.testing.assert_array_equal(C, want)


def test_logits_have_their_own_entry():
    from fastrbfkm._backend import assign_logits

    Z = np.array([[1.0, 2.0, 3.5], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(assign_logits(Z, K.SOFTMAX).sum(axis=1), 1.0)
    np.testing.assert_array_equal(assign_logits(Z[0], K.ENTMAX15), assign_logits(Z, K.ENTMAX15)[0])
    with pytest.raises(ValueError, match="Z"):
        assign_logits(np.array([[np.nan, 1.0]]), K.SOFTMAX)
