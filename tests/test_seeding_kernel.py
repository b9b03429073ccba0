"""Greedy k-means++'s kernel: its block distances (dense rows as one BLAS
product, or for a few features summed across the rows in SIMD lanes, CSR
rows one at a time) choose the seeds, and leave the closest distances, of
the plain row-at-a-time kernel (bit for bit, but for the BLAS product's
rounding), both dtypes, dense and CSR, odd sizes; and the seeds of naive.py."""

import numpy as np
import pytest
from numba import njit
from scipy import sparse

import fastrbfkm._kernels.seeding as seeding
from fastrbfkm import _kernels as K
from fastrbfkm._kernels.chunks import BLOCK_ROWS, MIN_CHUNK_ROWS, chunk_bounds, n_chunks
from fastrbfkm._kernels.dense import SEED_DIRECT_MAX_D
from fastrbfkm._kernels.layout import dims, seed_norms, seed_rows, to_seed
from fastrbfkm._validation import as_csr

from . import naive
from .helpers import tolerance

SHAPES = [  # (n, d, k)
    (1, 1, 1),
    (5003, 1, 17),  # several chunks, the last one short
    (5003, 3, 2),
    (5003, SEED_DIRECT_MAX_D + 1, 9),  # the fewest features of the BLAS product
    (BLOCK_ROWS + 1, 64, 5),  # one full block and a row
    (2 * MIN_CHUNK_ROWS + 77, 64, 17),
    (MIN_CHUNK_ROWS + 77, 1500, 3),  # wide rows: blocks of block_rows(d) < BLOCK_ROWS rows
]


@njit
def _pick(cumulative, value):
    return min(np.searchsorted(cumulative, value, side="right"), cumulative.shape[0] - 1)


@njit
def row_at_a_time(X, w, k, uniforms):
    """The kernel with every distance :func:`~.layout.to_seed` of one row,
    on one thread: ``(seeds, closest)``."""
    n = dims(X)[0]
    trials = uniforms.shape[1]
    chunks = n_chunks(n, trials)
    unit = w.shape[0] == 0
    mu, norms = seed_norms(X)
    cumulative = np.empty(n)
    acc = 0.0
    for i in range(n):
        acc += 1.0 if unit else w[i]
        cumulative[i] = acc
    seeds = np.empty(k, dtype=np.int64)
    seeds[0] = _pick(cumulative, uniforms[0, 0] * cumulative[-1])
    T, tnorm = seed_rows(X, seeds[:1], mu)
    closest = np.empty(n)
    for i in range(n):
        closest[i] = to_seed(X, i, mu, norms, T, tnorm, 0)
    closest[seeds[0]] = 0.0
    candidates = np.empty(trials, dtype=np.int64)
    partial = np.zeros((chunks, trials))
    for c in range(1, k):
        acc = 0.0
        for i in range(n):
            acc += closest[i] if unit else w[i] * closest[i]
            cumulative[i] = acc
        for t in range(trials):
            candidates[t] = _pick(cumulative, uniforms[c, t] * cumulative[-1])
        T, tnorm = seed_rows(X, candidates, mu)
        for b in range(chunks):
            start, stop = chunk_bounds(n, chunks, b)
            for t in range(trials):
                acc = 0.0
                for i in range(start, stop):
                    best_d = min(closest[i], to_seed(X, i, mu, norms, T, tnorm, t))
                    acc += best_d if unit else w[i] * best_d
                partial[b, t] = acc
        best = 0
        best_pot = np.inf
        for t in range(trials):
            pot = 0.0
            for b in range(chunks):
                pot += partial[b, t]
            if pot < best_pot:
                best_pot = pot
                best = t
        seeds[c] = candidates[best]
        for i in range(n):
            closest[i] = min(closest[i], to_seed(X, i, mu, norms, T, tnorm, best))
        closest[seeds[c]] = 0.0
    return seeds, closest


def problem(n, d, k, dtype, layout, weighted):
    """``(X as given to the kernel, X dense, w, uniforms)``; CSR rows are
    about 40 % nonzero."""
    rng = np.random.default_rng(n + 31 * d + k)
    X = rng.normal(size=(n, d)) * 3.0 + 1.0
    if layout == "csr":
        X *= rng.uniform(size=(n, d)) < 0.4
    X = X.astype(dtype)
    w = rng.uniform(0.1, 2.0, size=n) if weighted else np.empty(0)
    uniforms = rng.random((k, 2 + int(np.log(k))))
    Xk = as_csr(sparse.csr_matrix(X), "X") if layout == "csr" else X
    return Xk, X, w, uniforms


def seeded(kernel, Xk, w, uniforms):
    n = Xk.shape[0]
    seeds = np.empty(uniforms.shape[0], dtype=np.int64)
    closest = np.empty(n)
    kernel(Xk, w, *K.seeding_norms(Xk), seeds, 0, uniforms.shape[0], uniforms, closest)
    return seeds, closest


@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("shape", SHAPES)
def test_seeds_and_closest_are_those_of_a_row_at_a_time(shape, layout, weighted, dtype):
    n, d, k = shape
    Xk, X, w, uniforms = problem(n, d, k, dtype, layout, weighted)
    seeds, closest = seeded(K.kmeans_plusplus, Xk, w, uniforms)
    ref_seeds, ref_closest = row_at_a_time(Xk, w, k, uniforms)
    np.testing.assert_array_equal(seeds, ref_seeds)
    if layout == "csr" or d <= SEED_DIRECT_MAX_D:
        np.testing.assert_array_equal(closest, ref_closest)  # bit for bit
    else:  # the BLAS product sums in its own order
        scale = np.abs(ref_closest).max()
        np.testing.assert_allclose(closest, ref_closest, rtol=1e-12, atol=1e-12 * scale)
    if layout == "dense" or dtype == np.float64:
        # CSR float32: the expansion's rounding may pick another of two near-equal candidates
        expected = naive.kmeans_plusplus(X, w if weighted else None, k, uniforms)
        np.testing.assert_array_equal(seeds, expected)
    X64 = X.astype(np.float64)
    nearest = np.min([((X64 - X64[s]) ** 2).sum(axis=1) for s in seeds], axis=0)
    scale = (X64**2).sum(axis=1).max()
    np.testing.assert_allclose(closest, nearest, rtol=0, atol=tolerance(dtype) * scale)


@pytest.fixture(scope="module")
def recomputing():
    """The kernel compiled afresh with no distances kept (each step's winner's
    distances computed again), as for data too large to keep them."""
    saved = seeding.KEEP_ENTRIES
    seeding.KEEP_ENTRIES = 0  # numba reads the global when it compiles
    try:
        kernel = njit(parallel=True)(seeding.kmeans_plusplus.py_func)
        yield kernel
    finally:
        seeding.KEEP_ENTRIES = saved


@pytest.mark.parametrize(
    "layout, dtype, d",
    [
        ("dense", np.float32, 5),
        ("dense", np.float64, 5),
        ("dense", np.float32, 2 * SEED_DIRECT_MAX_D),
        ("csr", np.float64, 5),
    ],
)
def test_recomputing_the_winners_distances_is_keeping_them(recomputing, layout, dtype, d):
    Xk, _, w, uniforms = problem(2 * MIN_CHUNK_ROWS + 77, d, 17, dtype, layout, True)
    seeds, closest = seeded(recomputing, Xk, w, uniforms)
    kept_seeds, kept_closest = seeded(K.kmeans_plusplus, Xk, w, uniforms)
    ref_seeds, ref_closest = row_at_a_time(Xk, w, uniforms.shape[0], uniforms)
    np.testing.assert_array_equal(seeds, kept_seeds)
    np.testing.assert_array_equal(seeds, ref_seeds)
    if d <= SEED_DIRECT_MAX_D:
        np.testing.assert_array_equal(closest, kept_closest)
        np.testing.assert_array_equal(closest, ref_closest)
    else:  # a product of one candidate rounds as it will, not as the product of all
        for other in (kept_closest, ref_closest):
            np.testing.assert_allclose(closest, other, rtol=1e-12, atol=1e-12 * other.max())


@pytest.mark.parametrize("offset", [0.0, 1e6, -3e7])
def test_the_product_measures_far_from_the_origin(offset):
    """The BLAS product's expansion is taken around the rows' mean, so rows
    far from the origin keep distances accurate to their spread, not to
    their magnitude (float64: float32 coordinates multiply exactly in
    float64 and would hide an expansion around the origin)."""
    rng = np.random.default_rng(5)
    d, k = 2 * SEED_DIRECT_MAX_D, 6
    centers = rng.normal(size=(k, d)) * 50.0
    X = np.repeat(centers, 200, axis=0) + rng.normal(size=(200 * k, d)) + offset
    uniforms = rng.random((k, 2 + int(np.log(k))))
    seeds, closest = seeded(K.kmeans_plusplus, X, np.empty(0), uniforms)
    assert sorted(seeds // 200) == list(range(k))
    nearest = np.min([((X - X[s]) ** 2).sum(axis=1) for s in seeds], axis=0)
    spread = np.median(nearest)
    np.testing.assert_allclose(closest, nearest, rtol=1e-6, atol=1e-6 * spread)


def test_duplicates_of_a_seed_are_never_drawn_far_from_the_mean():
    """Rows equal to a seed are at exactly zero (the product's rounding
    residue, about 1e-16 of their squared distance to the mean, would let
    them be drawn again as duplicate seeds), and rows 1e-3 apart at 1e5
    from the mean are still told apart."""
    d = 2 * SEED_DIRECT_MAX_D
    rng = np.random.default_rng(8)
    axis = rng.normal(size=d)
    axis *= 1e5 / np.linalg.norm(axis)
    step = rng.normal(size=d)
    step *= 1e-3 / np.linalg.norm(step)
    points = np.array([axis, axis + step, -axis, -axis + step])
    X = np.repeat(points, 500, axis=0)
    for trial in range(20):
        uniforms = np.random.default_rng(trial).random((4, 3))
        seeds, closest = seeded(K.kmeans_plusplus, X, np.empty(0), uniforms)
        assert sorted(seeds // 500) == [0, 1, 2, 3], trial
        assert np.all(closest == 0.0)
