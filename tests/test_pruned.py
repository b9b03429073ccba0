"""Pruned hard passes (bounds carried between Lloyd iterations) against the
naive references and against the unpruned pass: same labels, bit-identical
statistics, fewer distances."""

import numpy as np
import pytest

from fastrbfkm import _kernels as K
from fastrbfkm._rows import InMemoryRows, half_gaps, hard_passes, soft_passes
from fastrbfkm.lloyd import run_lloyd

from . import naive
from .helpers import make_problem, tolerance


def lloyd_passes(rows, C, iterations):
    """Pruned and unpruned hard passes side by side along Lloyd iterations;
    yields ``(C, pruned, unpruned, labels, evaluated)`` at each."""
    assert rows.prunes(C.shape[0])
    bounds = rows.new_bounds(C.shape[0])
    for _ in range(iterations):
        N, S, summary, cells, evaluated = rows.pruned_stats(C, bounds)
        want = np.bincount(bounds.labels, minlength=len(N))  # every row counted once
        assert want.sum() == rows.n
        yield C, (N, S, summary, cells), rows.stats(C, 0.0, K.HARD), bounds.labels.copy(), evaluated
        alive = N > 0
        new = C.astype(np.float64)
        new[alive] = S[alive] / N[alive, None]
        C = new.astype(C.dtype)


@pytest.mark.parametrize(("n", "d", "k"), [(4099, 3, 47), (3001, 17, 20), (2500, 40, 129)])
@pytest.mark.parametrize("weighted", [False, True])
def test_pruned_pass_matches_naive_and_unpruned(dtype, n, d, k, weighted):
    X, C, w = make_problem(n, d, k, dtype, seed=n)
    w = w if weighted else np.empty(0)
    rows = InMemoryRows(X, w)
    for C_t, pruned, unpruned, labels, evaluated in lloyd_passes(rows, C, 8):
        D = naive.sqdist(X, C_t)
        best = D.min(axis=1)
        # the nearest center (to the rounding of the distances)
        assert np.all(D[np.arange(n), labels] <= best * (1 + tolerance(dtype)) + 1e-12)
        np.testing.assert_array_equal(labels, rows.labels(C_t))
        # the cells' sums, over those labels
        R = np.zeros((n, k))
        R[np.arange(n), labels] = w if weighted else 1.0
        N_ref, S_ref = R.sum(axis=0), R.T @ X.astype(np.float64)
        np.testing.assert_allclose(pruned[0], N_ref, rtol=1e-12)
        np.testing.assert_allclose(pruned[1], S_ref, rtol=tolerance(dtype), atol=1e-8)
        # bit-identical to the unpruned pass
        np.testing.assert_array_equal(pruned[0], unpruned[0])
        np.testing.assert_array_equal(pruned[1], unpruned[1])
        inertia = naive.inertia(X, C_t, w if weighted else None)
        np.testing.assert_allclose(pruned[2][K.INERTIA], inertia, rtol=tolerance(dtype))
        D_own = D[np.arange(n), labels] * (w if weighted else 1.0)
        cells = np.bincount(labels, D_own, minlength=k)
        np.testing.assert_allclose(pruned[3], cells, rtol=tolerance(dtype), atol=1e-9)
        assert n <= evaluated <= n * (k + 1)


def test_pruned_passes_skip_most_distances_on_clustered_data(dtype):
    from fastrbfkm.datasets import make_blobs

    X = make_blobs(8000, centers=100, n_features=16, random_state=0, dtype=dtype)[0]
    rows = InMemoryRows(X, np.empty(0))
    C = X[np.random.default_rng(0).choice(len(X), 50, replace=False)]
    shares = [ev / (len(X) * 50) for *_, ev in lloyd_passes(rows, C, 14)]
    assert shares[0] == 1.0  # the first pass forms every distance
    assert max(shares[-4:]) < 0.1  # once converged: the own center only


def passes_taken(X, k, iterations, monkeypatch):
    """Which passes a Lloyd run of ``iterations`` over X took, in order
    ("P" pruned, "F" a first pruned pass, which forms every distance and
    renews the bounds, "U" unpruned; the last is the measuring pass), its result
    and its initial centers."""
    rows = InMemoryRows(X, np.empty(0))
    taken = []
    pruned, unpruned = rows.pruned_stats, rows.stats

    def pruned_pass(C, bounds):
        taken.append("F" if bounds.centers is None else "P")
        return pruned(C, bounds)

    monkeypatch.setattr(rows, "pruned_stats", pruned_pass)
    monkeypatch.setattr(rows, "stats", lambda *a: taken.append("U") or unpruned(*a))
    C = X[np.random.default_rng(0).choice(len(X), k, replace=False)]
    result = run_lloyd(rows, C, iterations, 0.0)
    return "".join(taken), result, C


def test_hard_passes_back_off_where_the_bounds_fail(dtype, monkeypatch):
    """On data without clusters nearly every bound fails: after a pruned
    pass that forms most distances, the next passes are unpruned (1, then
    2, ...), the last of them a first pass that renews the bounds, and the
    run ends where an unpruned run ends, bit for bit."""
    import fastrbfkm._rows as R
    from fastrbfkm.datasets import make_blobs

    X = np.random.default_rng(1).normal(size=(6000, 24)).astype(dtype)
    taken, result, C = passes_taken(X, 64, 9, monkeypatch)
    # The first pass forms every distance (not judged); two fail, each
    # followed by a wait that ends with renewed bounds; those hold once
    # the centers slow down (stale ones, loosened by every move of the
    # wait, went on failing: "FPUPUUPUUU").
    assert taken == "FPFPUFPPPP"
    monkeypatch.undo()
    monkeypatch.setattr(R, "PRUNE_MIN_CLUSTERS", 10**9)
    full = run_lloyd(InMemoryRows(X, np.empty(0)), C, 9, 0.0)
    np.testing.assert_array_equal(result.centers, full.centers)
    monkeypatch.undo()
    # Clustered data: once the centers settle the bounds hold, and every
    # pass is pruned (one may fail early, while the centers move far).
    X = make_blobs(6000, centers=100, n_features=24, random_state=0, dtype=dtype)[0]
    taken = passes_taken(X, 64, 9, monkeypatch)[0]
    assert taken.count("U") + taken.count("F") <= 2 and taken.endswith("P" * 6)


def test_pruned_pass_ties_go_to_the_lowest_index_and_empty_cells(dtype):
    X, C, _ = make_problem(2000, 5, 30, dtype, seed=1)
    C[7] = C[3]  # duplicate centers: every tie to index 3
    C[20] = 1e3  # a center no row is near: an empty cell
    rows = InMemoryRows(X, np.empty(0))
    for t, (C_t, pruned, unpruned, labels, _) in enumerate(lloyd_passes(rows, C, 5)):
        np.testing.assert_array_equal(labels, rows.labels(C_t))
        np.testing.assert_array_equal(pruned[1], unpruned[1])
        if t == 0:
            assert np.any(labels == 3) and not np.any(labels == 7)
        assert pruned[0][20] == 0


def test_bounds_carry_over_between_lloyd_runs_that_share_passes(dtype):
    from fastrbfkm.datasets import make_blobs

    X = make_blobs(6000, centers=200, n_features=8, random_state=1, dtype=dtype)[0]
    rows = InMemoryRows(X, np.empty(0))
    C = X[np.random.default_rng(1).choice(len(X), 50, replace=False)]
    passes = hard_passes(rows, 50)
    first = run_lloyd(rows, C, 100, 0.0, passes=passes)
    bounds = passes.bounds
    assert bounds.centers is not None
    moved = first.centers.copy()
    moved[:2] = first.centers[2:4] + 0.01  # a swap move: two centers jump
    evaluated = rows.pruned_stats(moved, bounds)[-1]
    assert evaluated < 0.25 * len(X) * 50  # no full first pass
    np.testing.assert_array_equal(bounds.labels, rows.labels(moved))
    # a run started from the carried bounds ends where fresh passes' does
    again = run_lloyd(rows, moved, 100, 0.0, passes=passes)
    fresh = run_lloyd(rows, moved, 100, 0.0)
    np.testing.assert_array_equal(again.centers, fresh.centers)
    np.testing.assert_allclose(passes.cell_inertia(again.centers).sum(), again.inertia, rtol=1e-6)
    np.testing.assert_allclose(
        rows.cell_inertia(again.centers), passes.cell_inertia(again.centers), rtol=1e-4
    )


def test_the_rows_keep_no_state_between_lloyd_runs(dtype):
    """A pass depends on its arguments only: the same run twice over the same
    rows object, without shared passes, gives the same bits (the bounds live
    in the caller's :class:`HardPasses`, not in the rows)."""
    from fastrbfkm.datasets import make_blobs

    X = make_blobs(4000, centers=120, n_features=8, random_state=2, dtype=dtype)[0]
    rows = InMemoryRows(X, np.empty(0))
    C = X[np.random.default_rng(2).choice(len(X), 40, replace=False)]
    once = run_lloyd(rows, C, 100, 0.0)
    run_lloyd(rows, X[-40:], 100, 0.0)  # another run in between
    twice = run_lloyd(rows, C, 100, 0.0)
    np.testing.assert_array_equal(once.centers, twice.centers)
    assert once.inertia == twice.inertia and once.n_iter == twice.n_iter
    assert rows.new_bounds(40) is not rows.new_bounds(40)


def test_half_gaps_are_lower_bounds():
    rng = np.random.default_rng(0)
    C = rng.normal(size=(50, 7)) * 1e3 + 1e6
    D = np.sqrt(naive.sqdist(C, C))
    np.fill_diagonal(D, np.inf)
    gaps = half_gaps(C)
    assert np.all(gaps <= D.min(axis=1) / 2)
    np.testing.assert_allclose(gaps, D.min(axis=1) / 2, rtol=1e-6)
    assert half_gaps(C[:1])[0] == np.inf


@pytest.mark.parametrize("q", [1, 4])
def test_nearest_centers_over_several_blocks_ties_and_duplicates(q):
    """Each center and its q nearest others, nearest first, over several
    blocks of centers; ties (a grid) to the lowest index, a duplicate
    center nearest to its twin."""
    from fastrbfkm._kernels.pruned import GAP_ROWS

    rng = np.random.default_rng(2)
    C = rng.integers(0, 6, size=(2 * GAP_ROWS + 7, 3)).astype(np.float64)
    C = np.unique(C, axis=0)[rng.permutation(len(np.unique(C, axis=0)))]
    C[-1] = C[3]  # a duplicate
    P = C  # integers: every product exact, so ties are exact ties
    near = K.nearest_centers(P, (P * P).sum(axis=1), q)
    np.testing.assert_array_equal(near, naive.nearest_centers(C, q))
    assert near[3, 1] == len(C) - 1 and near[-1, 1] == 3
    two = K.nearest_centers(P[:2], (P[:2] ** 2).sum(axis=1), 1)
    np.testing.assert_array_equal(two, [[0, 1], [1, 0]])
    # every other center (q = k - 1), and none (q = 0, one center)
    norms = (P[:9] ** 2).sum(axis=1)
    every = K.nearest_centers(P[:9], norms, 8)
    np.testing.assert_array_equal(every, naive.nearest_centers(C[:9], 8))
    np.testing.assert_array_equal(K.nearest_centers(P[:1], norms[:1], 0), [[0]])


def test_half_gaps_over_several_blocks_of_centers_and_duplicates():
    from fastrbfkm._kernels.pruned import GAP_ROWS

    rng = np.random.default_rng(1)
    C = rng.normal(size=(2 * GAP_ROWS + 7, 5)) * 10.0
    C[-1] = C[3]  # a duplicate: both at gap 0
    D = np.sqrt(naive.sqdist(C, C))
    np.fill_diagonal(D, np.inf)
    gaps = half_gaps(C)
    assert np.all(gaps <= D.min(axis=1) / 2)
    np.testing.assert_allclose(gaps, D.min(axis=1) / 2, rtol=1e-6, atol=1e-5)
    assert gaps[3] == gaps[-1] == 0.0
    two = half_gaps(C[:2])
    assert two[0] == two[1] <= np.linalg.norm(C[0] - C[1]) / 2
    np.testing.assert_allclose(two, np.linalg.norm(C[0] - C[1]) / 2, rtol=1e-9)


@pytest.mark.parametrize(("n", "d", "k"), [(0, 3, 2), (1, 1, 1), (4099, 7, 13)])
def test_own_sqdists_match_naive(dtype, n, d, k):
    rng = np.random.default_rng(n)
    X = (rng.normal(size=(n, d)) + 50.0).astype(dtype)  # far from the origin
    C = (rng.normal(size=(k, d)) + 50.0).astype(dtype)
    labels = rng.integers(0, k, size=n).astype(np.int32)
    got = K.own_sqdists(X, C, labels)
    assert got.dtype == np.float64 and got.shape == (n,)
    np.testing.assert_allclose(got, naive.own_sqdists(X, C, labels), rtol=1e-12)


def test_farthest_after_a_pruned_pass_takes_its_labels(dtype, monkeypatch):
    """The relocation of empty cells after a pruned pass reads the pass's
    labels (one distance a row), and finds the rows a full pass finds;
    at centers the last pass was not at, it forms every distance."""
    X, C, w = make_problem(5000, 6, 40, dtype, seed=8)
    rows = InMemoryRows(X, w)
    want = rows.farthest(C, 7)
    passes = hard_passes(rows, 40)
    passes.stats(C)
    monkeypatch.setattr(rows, "farthest", None)  # not called: the labels are at hand
    got = passes.farthest(C, 7)
    np.testing.assert_array_equal(got.index, want.index)
    np.testing.assert_array_equal(got.labels, want.labels)
    np.testing.assert_array_equal(got.rows, want.rows)
    np.testing.assert_array_equal(got.weights, want.weights)
    np.testing.assert_allclose(got.dist, naive.sqdist(X, C).min(axis=1)[want.index], rtol=1e-12)
    monkeypatch.undo()
    moved = (C + np.asarray(0.5, dtype)).astype(dtype)
    np.testing.assert_array_equal(passes.farthest(moved, 7).index, rows.farthest(moved, 7).index)


def test_lloyd_with_and_without_pruning_is_bit_identical(dtype, monkeypatch):
    import fastrbfkm._rows as R

    X, C, w = make_problem(6000, 8, 64, dtype, seed=5)
    rows = InMemoryRows(X, w)
    pruned = run_lloyd(rows, C, 50, 0.0)
    monkeypatch.setattr(R, "PRUNE_MIN_CLUSTERS", 10**9)
    assert not rows.prunes(64)
    full = run_lloyd(rows, C, 50, 0.0)
    np.testing.assert_array_equal(pruned.centers, full.centers)
    assert pruned.n_iter == full.n_iter
    # The measuring pass after the last step is pruned too: a row whose
    # bound holds has its own distance formed alone, not in the product of
    # a full pass, so the inertias agree to X's rounding, not bit for bit.
    rtol = 20 * np.finfo(dtype).eps
    np.testing.assert_allclose(pruned.inertia, full.inertia, rtol=rtol)
    np.testing.assert_allclose(pruned.inertia, naive.inertia(X, pruned.centers, w), rtol=rtol)


def test_sources_without_pruning_say_so():
    from scipy import sparse

    from fastrbfkm._rows import PrunedRows, SparseRows, hard_passes

    M = sparse.random(100, 30, density=0.2, format="csr", random_state=0)
    csr = K.CSR(M.data, M.indices.astype(np.int32), M.indptr.astype(np.int64), 30)
    rows = SparseRows(csr, np.empty(0))
    assert not isinstance(rows, PrunedRows)  # the pruned kernels are dense only
    assert type(hard_passes(rows, 64)).__name__ == "HardPasses"
    assert soft_passes(rows) is rows
    X, _, _ = make_problem(100, 2, 8)
    dense = InMemoryRows(X, np.empty(0))
    assert not dense.prunes(8)  # few centers: no pruning
    assert type(hard_passes(dense, 8)).__name__ == "HardPasses"


def pruned_soft_passes(rows, C, sigma, mode, iterations):
    """Pruned soft passes (bounds carried) along soft Lloyd steps at one
    temperature; yields ``(C, (N, S, summary), labels, lower, evaluated)``."""
    from fastrbfkm._rows import Bounds

    bounds = Bounds(np.zeros(rows.n, dtype=np.int32), np.zeros(rows.n))
    for _ in range(iterations):
        N, S, summary, evaluated = rows.pruned_soft_stats(C, sigma, mode, bounds)
        yield C, (N, S, summary), bounds.labels.copy(), bounds.lower.copy(), evaluated
        alive = N > 0
        new = C.astype(np.float64)
        new[alive] = S[alive] / N[alive, None]
        C = new.astype(C.dtype)


SOFT_MODES = [("entmax15", K.ENTMAX15), ("softmax", K.SOFTMAX)]


@pytest.mark.parametrize(("assignment", "mode"), SOFT_MODES, ids=["entmax15", "softmax"])
@pytest.mark.parametrize(("n", "d", "k", "sigma"), [(4099, 3, 47, 0.02), (2500, 40, 129, 0.5)])
@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
def test_pruned_soft_pass_matches_naive_and_unpruned(
    dtype, assignment, mode, n, d, k, sigma, weighted
):
    """The statistics of naive.py's responsibilities and of the unpruned
    pass (to rounding), each row's label its nearest center and its lower
    bound below its distance to every other center."""
    X, C, w = make_problem(n, d, k, dtype, seed=n + 1)
    w = w if weighted else np.empty(0)
    rows = InMemoryRows(X, w)
    # A gathered row's distances come from a BLAS product of another shape
    # than the unpruned pass's: the same to float64 rounding, but in float32
    # OpenBLAS rounds them differently on some CPUs (AMD EPYC: N 5e-6 apart
    # relative at d = 40), which moves soft responsibilities as much.
    rounding = 1e-9 if dtype == np.float64 else 1e-6
    passes = pruned_soft_passes(rows, C, sigma, mode, 6)
    for C_t, (N, S, summary), labels, lower, evaluated in passes:
        N_ref, S_ref = naive.stats(X, C_t, sigma, assignment, w if weighted else None)
        scale = float(np.abs(S_ref).max()) + 1.0
        np.testing.assert_allclose(N, N_ref, rtol=0, atol=10 * tolerance(dtype) * n)
        np.testing.assert_allclose(S, S_ref, rtol=0, atol=10 * tolerance(dtype) * scale * n / k)
        N_u, S_u, summary_u = K.block_stats(X, C_t, w, sigma, mode, True)
        np.testing.assert_allclose(N, N_u, rtol=0, atol=rounding * n)
        np.testing.assert_allclose(S, S_u, rtol=0, atol=rounding * scale * n)
        np.testing.assert_allclose(
            summary[K.OBJECTIVE], summary_u[K.OBJECTIVE], rtol=tolerance(dtype)
        )
        np.testing.assert_allclose(summary[K.SOFT], summary_u[K.SOFT], rtol=0, atol=2.0)
        D = naive.sqdist(X, C_t)
        best = D.min(axis=1)
        assert np.all(D[np.arange(n), labels] <= best * (1 + tolerance(dtype)) + 1e-12)
        others = D.copy()
        others[np.arange(n), labels] = np.inf
        assert np.all(lower <= np.sqrt(others.min(axis=1)) * (1 + 1e-6) + 1e-9)
        assert n <= evaluated <= n * (k + 1)


def test_cold_soft_passes_form_few_distances(dtype):
    """At a cold temperature, once the centers settle, an entmax15 pass
    forms little more than each row's own distance, as a pruned hard pass."""
    from fastrbfkm.datasets import make_blobs

    X = make_blobs(8000, centers=100, n_features=16, random_state=0, dtype=dtype)[0]
    rows = InMemoryRows(X, np.empty(0))
    C = X[np.random.default_rng(0).choice(len(X), 50, replace=False)]
    C = run_lloyd(rows, C, 100, 0.0).centers
    shares = [ev / (len(X) * 50) for *_, ev in pruned_soft_passes(rows, C, 0.05, K.ENTMAX15, 6)]
    assert shares[0] == 1.0
    assert max(shares[-3:]) < 0.1


def test_soft_fits_prune_once_cold_and_agree_with_the_unpruned_passes(monkeypatch):
    """RBFKMeans at a fixed cold temperature runs pruned soft passes after
    the first (the rows source's choice) and ends at the centers of a fit
    whose soft passes are all unpruned, to rounding."""
    from fastrbfkm import RBFKMeans
    from fastrbfkm.datasets import make_blobs

    X = make_blobs(6000, centers=60, n_features=12, random_state=3)[0]
    calls = []
    original = InMemoryRows.pruned_soft_stats

    def counting(self, *args):
        out = original(self, *args)
        calls.append(out[-1])
        return out

    monkeypatch.setattr(InMemoryRows, "pruned_soft_stats", counting)
    pruned = RBFKMeans(30, sigma=0.05, init="k-means++", random_state=0).fit(X)
    assert len(calls) >= 2 and calls[-1] < 0.2 * len(X) * 30
    monkeypatch.setattr("fastrbfkm._rows.PRUNE_SOFT_SHARE", -1.0)  # never prune
    calls.clear()
    plain = RBFKMeans(30, sigma=0.05, init="k-means++", random_state=0).fit(X)
    assert not calls
    np.testing.assert_allclose(pruned.cluster_centers_, plain.cluster_centers_, rtol=0, atol=1e-8)


def test_a_pass_depends_on_no_earlier_pass():
    """The rows' own soft passes carry no state: the same call twice gives
    the same bits, unpruned. The state that prunes a run's passes once
    they are cold belongs to the run (``soft_passes(rows)``), and a new
    run starts unpruned."""
    from fastrbfkm.datasets import make_blobs

    X = make_blobs(6000, centers=60, n_features=12, random_state=3)[0]
    rows = InMemoryRows(X, np.empty(0))
    C = X[::200][:30].copy()
    calls = []
    original = InMemoryRows.pruned_soft_stats

    def counting(self, *args):
        calls.append(1)
        return original(self, *args)

    InMemoryRows.pruned_soft_stats = counting
    try:
        first = rows.stats(C, 0.05, K.ENTMAX15)
        for _ in range(3):
            again = rows.stats(C, 0.05, K.ENTMAX15)
            for a, b in zip(first, again, strict=True):
                np.testing.assert_array_equal(a, b)
        assert not calls
        run = soft_passes(rows)
        for _ in range(3):
            run.stats(C, 0.05, K.ENTMAX15)
        assert len(calls) == 2  # the first pass of a run is unpruned
        fresh = soft_passes(rows).stats(C, 0.05, K.ENTMAX15)
        assert len(calls) == 2
        for a, b in zip(first, fresh, strict=True):
            np.testing.assert_array_equal(a, b)
    finally:
        InMemoryRows.pruned_soft_stats = original
