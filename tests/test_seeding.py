"""``init="k-means++"`` in memory: greedy k-means++ on a weighted sample of
the rows (:func:`fastrbfkm.seeding.seeding_sample`), then k-means|| rounds
over every row (:func:`fastrbfkm.seeding.kmeans_parallel_rows`), when there
are more rows than the sample; greedy k-means++ on every row otherwise. The
sample and the rounds are those of the naive references, dense and CSR
alike, in both dtypes."""

import numpy as np
import pytest
from scipy import sparse

import fastrbfkm as fk
import fastrbfkm.seeding as seeding
from fastrbfkm import RBFKMeans
from fastrbfkm._rows import InMemoryRows, SparseRows
from fastrbfkm._validation import as_csr
from fastrbfkm.datasets import make_blobs
from fastrbfkm.seeding import kmeans_parallel_rows, seed_indices, seed_rows, seeding_sample

from . import naive
from .helpers import DTYPES, make_problem


def naive_sample(n, m, w, rng):
    """The m rows with the largest keys log(u) / w (zero weight: never
    before a positive one), sorted: Efraimidis and Spirakis's weighted
    sample without replacement, one row at a time."""
    u = rng.random(n)
    keys = []
    for i in range(n):
        wi = 1.0 if w.size == 0 else w[i]
        keys.append(np.log(u[i]) / wi if wi > 0 else -np.inf)
    return np.sort(np.argsort(keys, kind="stable")[n - m :])


@pytest.fixture
def small_sample(monkeypatch):
    """Samples of 3 rows a center, at least 50."""
    monkeypatch.setattr(seeding, "SEED_ROWS_PER_CENTER", 3)
    monkeypatch.setattr(seeding, "SEED_ROWS_MIN", 50)


def test_sample_sizes():
    assert seed_rows(1) == seeding.SEED_ROWS_MIN
    assert seed_rows(4096) == 4096 * seeding.SEED_ROWS_PER_CENTER


@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
@pytest.mark.parametrize("n, k", [(51, 3), (1001, 5), (997, 40)])
def test_the_sample_is_the_naive_weighted_draw(small_sample, n, k, weighted):
    w = np.random.default_rng(n).uniform(0.1, 3.0, size=n) if weighted else np.empty(0)
    got = seeding_sample(n, k, w, np.random.default_rng(7))
    m = max(50, 3 * k)
    want = naive_sample(n, m, w, np.random.default_rng(7))
    np.testing.assert_array_equal(got, want)
    assert got.dtype.kind == "i" and np.all(np.diff(got) > 0)


def test_no_sample_and_no_draw_when_few_rows_weigh(small_sample):
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    assert seeding_sample(50, 3, np.empty(0), rng) is None  # n == m
    w = np.zeros(500)
    w[::10] = 1.0  # 50 rows with a weight: no more than the sample
    assert seeding_sample(500, 3, w, rng) is None
    assert rng.bit_generator.state == state


def test_zero_weights_are_never_drawn_and_heavy_rows_always(small_sample):
    rng = np.random.default_rng(4)
    w = np.zeros(2000)
    w[::3] = 1.0
    heavy = np.arange(1, 2000, 97)
    w[heavy] = 1e12
    for seed in range(5):
        index = seeding_sample(2000, 4, w, np.random.default_rng(seed))
        assert index.size == 50
        assert np.all(w[index] > 0)
        assert set(heavy) <= set(index)
    assert not np.array_equal(
        seeding_sample(2000, 4, w, rng), seeding_sample(2000, 4, w, np.random.default_rng(5))
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
@pytest.mark.parametrize("rounds, oversampling", [(1, 1.0), (2, 0.5), (3, 2.0)])
def test_kmeans_parallel_rounds_are_the_naive_rounds(dtype, weighted, rounds, oversampling):
    X, _, w = make_problem(1201, 5, 9, dtype=dtype, seed=4)
    w = w if weighted else np.empty(0)
    rows = InMemoryRows(X, w)
    start = X[[3, 100, 999, 7, 64, 500, 1200, 0, 333]]  # k rows, as the seeding starts
    got = kmeans_parallel_rows(
        rows.nearest, rows.take, 1201, 9, w, np.random.default_rng(8), start, rounds, oversampling
    )
    unit = w if weighted else None
    want = naive.kmeans_parallel_rows(
        X, unit, 9, start, np.random.default_rng(8), rounds, oversampling
    )
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)
    assert len(np.unique(got, axis=0)) == 9
    # no rounds: the start itself
    same = kmeans_parallel_rows(rows.nearest, rows.take, 1201, 9, w, None, start, 0, 1.0)
    np.testing.assert_array_equal(same, start)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
def test_seeds_are_a_round_from_the_greedy_seeds_of_the_sample(small_sample, dtype, weighted):
    X, _, w = make_problem(1003, 5, 7, dtype=dtype, seed=2)
    w = w if weighted else np.empty(0)
    got = InMemoryRows(X, w).initial_centers(7, "k-means++", np.random.default_rng(11))
    rng = np.random.default_rng(11)
    index = seeding_sample(1003, 7, w, rng)
    assert index.size == 50
    start = X[index][seed_indices(X[index], 7, np.empty(0), rng)]
    rounds, oversampling = seeding.SEED_ROUNDS, seeding.SEED_OVERSAMPLING
    want = naive.kmeans_parallel_rows(
        X, w if weighted else None, 7, start, rng, rounds, oversampling
    )
    np.testing.assert_array_equal(got, want)
    assert got.dtype == dtype
    assert all((X == c).all(axis=1).any() for c in got)  # rows of X
    # CSR rows: the same sample and seeds
    M = as_csr(sparse.csr_matrix(X), "X", fitting=True)
    csr = SparseRows(M, w).initial_centers(7, "k-means++", np.random.default_rng(11))
    np.testing.assert_array_equal(csr, got)


def test_every_row_when_there_are_not_more(small_sample):
    X, _, w = make_problem(50, 3, 4, seed=5)
    got = InMemoryRows(X, w).initial_centers(4, "k-means++", np.random.default_rng(2))
    want = X[seed_indices(X, 4, w, np.random.default_rng(2))]
    np.testing.assert_array_equal(got, want)
    # the public function seeds from every row, whatever n
    X, _, _ = make_problem(1003, 3, 4, seed=6)
    _, index = fk.kmeans_plusplus(X, 4, random_state=0)
    want = seed_indices(X, 4, np.empty(0), np.random.default_rng(0))
    np.testing.assert_array_equal(index, want)


def test_random_init_draws_no_sample(small_sample):
    X, _, w = make_problem(1003, 3, 4, seed=6)
    got = InMemoryRows(X, w).initial_centers(4, "random", np.random.default_rng(2))
    want = X[seeding.random_indices(1003, 4, w, np.random.default_rng(2))]
    np.testing.assert_array_equal(got, want)


def test_a_sampled_seeding_finds_every_separated_blob(small_sample):
    # 3 rows a center: each of 12 well-separated blobs still gets a seed
    # (at least 50 rows drawn), and the hard fit finds them all.
    X, y = make_blobs(3000, centers=12, cluster_std=0.2, random_state=3)
    for seed in range(3):
        km = RBFKMeans(12, assignment="hard", random_state=seed).fit(X)
        assert len(set(zip(y, km.labels_, strict=True))) == 12
