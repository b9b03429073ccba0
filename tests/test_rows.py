"""The passes over row blocks: combining the partial results of blocks gives
the pass over all rows (the contract every rows source relies on)."""

import itertools

import numpy as np
import pytest

from fastrbfkm import _kernels as K
from fastrbfkm._rows import PASSES, InMemoryRows

from .helpers import make_problem, tolerance


def split_pass(name, X, w, bounds, *args):
    """Run a pass block by block over ``bounds`` and combine in row order."""
    step = PASSES[name]
    partial = None
    for a, b in itertools.pairwise(bounds):
        part = step.block(X[a:b], w[a:b] if w.size else w, a, *args)
        partial = part if partial is None else step.combine(partial, part)
    return step.finish(partial)


BOUNDS = [0, 1, 70, 71, 200, 333]


@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("unit", [True, False])
def test_moments_combine(dtype, weighted, unit):
    X, _, w = make_problem(333, 4, 3, dtype, offset=50.0)
    w = np.empty(0) if unit else w
    mean, variance, cov = split_pass("moments", X, w, BOUNDS, weighted)
    ref = X.astype(np.float64)
    weights = w if (weighted and w.size) else None
    np.testing.assert_allclose(mean, np.average(ref, axis=0, weights=weights), rtol=1e-10)
    want = np.cov(ref.T, aweights=weights, bias=True)
    np.testing.assert_allclose(cov, want, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(variance, np.diag(want), rtol=1e-8, atol=1e-10)


def test_moments_blocks_without_weight():
    X, _, w = make_problem(333, 3, 2)
    w[:71] = 0.0  # the first blocks carry no weight at all
    mean, _, cov = split_pass("moments", X, w, BOUNDS, True)
    whole = InMemoryRows(X, w).moments()
    np.testing.assert_allclose(mean, whole.mean, rtol=1e-12)
    np.testing.assert_allclose(cov, whole.covariance, rtol=1e-10)


@pytest.mark.parametrize("mode", [K.HARD, K.SOFTMAX, K.ENTMAX15])
def test_stats_scatter_costs_combine(dtype, mode):
    X, C, w = make_problem(333, 5, 6, dtype)
    sigma = 0.0 if mode == K.HARD else 0.7
    rows = InMemoryRows(X, w)
    for name, args in [
        ("stats", (C, sigma, mode)),
        ("scatter", (C, sigma, mode)),
        ("cell_summary", (C, True)),
        ("cell_summary", (C, False)),
    ]:
        split = split_pass(name, X, w, BOUNDS, *args)
        whole = rows.reduce(name, *args)
        split = split if isinstance(split, tuple) else (split,)
        whole = whole if isinstance(whole, tuple) else (whole,)
        for a, b in zip(split, whole, strict=True):
            np.testing.assert_allclose(a, b, rtol=tolerance(np.float64), atol=1e-9)
    summary = split_pass("stats", X, w, BOUNDS, C, sigma, mode)[2]
    whole = rows.stats(C, sigma, mode)[2]
    assert summary[K.SUPPORT_MAX] == whole[K.SUPPORT_MAX]
    assert summary[K.OFF_WINNER_MAX] == whole[K.OFF_WINNER_MAX]


def test_farthest_combine_orders_by_distance_then_index():
    X = np.array([[0.0], [3.0], [-3.0], [1.0], [3.0], [-1.0]])
    C = np.array([[0.0]])
    w = np.arange(1.0, 7.0)
    dist, index, rows, weights, labels = split_pass("farthest", X, w, [0, 2, 3, 6], C, 3)
    np.testing.assert_array_equal(index, [1, 2, 4])  # three at distance 9, lowest index first
    np.testing.assert_array_equal(dist, [9.0, 9.0, 9.0])
    np.testing.assert_array_equal(rows[:, 0], [3.0, -3.0, 3.0])
    np.testing.assert_array_equal(weights, [2.0, 3.0, 5.0])
    np.testing.assert_array_equal(labels, [0, 0, 0])
    far = InMemoryRows(X, w).farthest(C, 3)
    np.testing.assert_array_equal(far.index, index)


def test_in_memory_assign_counts_rows():
    X, C, w = make_problem(100, 2, 4)
    labels, inertia, counts = InMemoryRows(X, w).assign(C)
    np.testing.assert_array_equal(counts, np.bincount(labels, minlength=4))
    D = ((X[:, None, :] - C[None]) ** 2).sum(-1)
    np.testing.assert_allclose(inertia, (w * D.min(1)).sum(), rtol=1e-10)


def test_farthest_keeps_m_rows_when_blocks_are_shorter():
    X = np.arange(10.0)[:, None]
    C = np.array([[-1.0]])
    w = np.empty(0)
    far = split_pass("farthest", X, w, [0, 2, 4, 7, 10], C, 6)
    np.testing.assert_array_equal(far[1], [9, 8, 7, 6, 5, 4])
    np.testing.assert_array_equal(far[1], InMemoryRows(X, w).farthest(C, 6).index)


@pytest.mark.parametrize("unit", [True, False])
def test_inertia_combine(unit):
    X, C, w = make_problem(333, 3, 5)
    w = np.empty(0) if unit else w
    inertia, counts = split_pass("inertia", X, w, BOUNDS, C)
    _, ref, ref_counts = InMemoryRows(X, w).assign(C)
    np.testing.assert_allclose(inertia, ref, rtol=1e-12)
    np.testing.assert_array_equal(counts, ref_counts)


@pytest.mark.parametrize("unit", [True, False])
def test_cell_inertia_combine_and_match_naive(unit):
    from . import naive

    X, C, w = make_problem(333, 3, 5)
    w = np.empty(0) if unit else w
    cells = split_pass("cell_inertia", X, w, BOUNDS, C)
    D = naive.sqdist(X, C)
    ref = np.bincount(D.argmin(axis=1), (1.0 if unit else w) * D.min(axis=1), minlength=5)
    np.testing.assert_allclose(cells, ref, rtol=1e-10)
    np.testing.assert_allclose(InMemoryRows(X, w).cell_inertia(C), ref, rtol=1e-10)


@pytest.mark.parametrize("unit", [True, False])
def test_random_draws_do_not_depend_on_the_blocks(unit):
    X, C, w = make_problem(333, 3, 5)
    w = np.empty(0) if unit else w
    rows = InMemoryRows(X, w)
    for name, args in [("oversample", (C, 0.02, 7)), ("draw", (9, 7))]:
        whole = rows.reduce(name, *args)
        split = split_pass(name, X, w, BOUNDS, *args)
        for a, b in zip(whole, split, strict=True):
            np.testing.assert_array_equal(a, b)
    drawn = rows.draw(9, 7)
    assert len(np.unique(drawn, axis=0)) == 9
    assert 0 < rows.oversample(C, 0.02, 7)[0].shape[0] < 333


@pytest.mark.parametrize("unit", [True, False])
def test_local_sources_draw_the_rows_of_the_draw_pass(unit, dtype, tmp_path):
    """In memory and streamed, the rows are chosen by their keys and copied
    once (``draw_into``): the same rows and weights as the pass, which
    carries the rows through its merges."""
    from fastrbfkm._rows import BlockRows
    from fastrbfkm._streaming import StreamedRows

    X, _, w = make_problem(1001, 3, 5, dtype=dtype)
    w[::7] = 0.0  # rows that are never drawn before a positive one
    w = np.empty(0) if unit else w
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
    for rows in (InMemoryRows(X, w), InMemoryRows(mapped, w), StreamedRows(mapped, w, 64)):
        for m in (1, 9, 900, 1001):
            drawn, weights = rows.draw_weighted(m, 7)
            ref_rows, ref_weights = BlockRows.draw_weighted(rows, m, 7)
            assert type(drawn) is np.ndarray and drawn.dtype == X.dtype
            np.testing.assert_array_equal(drawn, ref_rows)
            np.testing.assert_array_equal(weights, ref_weights)


def test_draw_prefers_heavy_rows_and_never_takes_zero_weight_first():
    X = np.arange(6.0)[:, None]
    w = np.array([0.0, 1e-9, 0.0, 1e9, 0.0, 1e9])
    drawn = InMemoryRows(X, w).draw(2, 3)
    np.testing.assert_array_equal(drawn[:, 0], [3.0, 5.0])
    assert InMemoryRows(X, w).draw(3, 3)[:, 0].tolist() == [1.0, 3.0, 5.0]


def test_top_keys_is_the_head_of_a_stable_sort():
    """The sample's rows: the m largest keys, largest first, ties (and
    zero-weight rows' -inf keys) to the lowest index, as a stable sort."""
    from fastrbfkm._rows import top_keys

    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(1, 60))
        keys = rng.integers(-5, 5, n).astype(float)  # many ties
        keys[rng.random(n) < 0.2] = -np.inf
        for m in (0, 1, int(rng.integers(1, n + 1)), n, n + 3):
            want = np.argsort(-keys, kind="stable")[:m]
            np.testing.assert_array_equal(top_keys(keys, m), want)
