"""Every kernel against the plain-numpy references in naive.py, both dtypes,
odd sizes (n not a multiple of the row block, several chunks)."""

import numpy as np
import pytest

import fastrbfkm as fk
import fastrbfkm.seeding
from fastrbfkm import _kernels as K
from fastrbfkm._kernels.chunks import BLOCK_ROWS, MIN_CHUNK_ROWS, chunk_bounds, n_chunks
from fastrbfkm._model import ASSIGNMENTS as REGISTERED
from fastrbfkm.seeding import greedy_seeds

from . import naive
from .helpers import make_problem, tolerance

#: Every registered assignment: a new one is tested here against tests/naive.py.
ASSIGNMENTS = list(REGISTERED)
SHAPES = [
    (1, 1, 1),
    (7, 1, 3),
    (BLOCK_ROWS + 1, 3, 5),
    (130, 2, 1),
    (300, 17, 40),  # k above the insertion-sort cutoff of entmax15
    (2 * MIN_CHUNK_ROWS + 77, 4, 9),  # several chunks, the last one short
    (MIN_CHUNK_ROWS + 5, 12, 11),  # d * k above DIRECT_MAX: BLAS blocks, two chunks
    (MIN_CHUNK_ROWS + 77, 1500, 3),  # wide rows: blocks of block_rows(d) < BLOCK_ROWS rows
]


def test_chunks_cover_rows_exactly_once():
    for n in [1, 63, 64, 2048, 2049, 10_000, 1_000_003]:
        chunks = n_chunks(n, 10)
        seen = np.zeros(n, dtype=int)
        for c in range(chunks):
            start, stop = chunk_bounds(n, chunks, c)
            seen[start:stop] += 1
        assert (seen == 1).all()


@pytest.mark.parametrize("shape", SHAPES)
def test_squared_distances(shape, dtype):
    X, C, _ = make_problem(*shape, dtype=dtype)
    D = fk.squared_distances(X, C)
    assert D.dtype == dtype and D.shape == (shape[0], shape[2])
    assert (D >= 0).all()
    scale = (X.astype(float) ** 2).sum(1).max() + (C.astype(float) ** 2).sum(1).max()
    np.testing.assert_allclose(D, naive.sqdist(X, C), rtol=0, atol=tolerance(dtype) * scale)


def test_squared_distances_offset_data_keeps_precision():
    # Far from the origin the expansion would cancel; the centering shift saves it.
    X, C, _ = make_problem(200, 3, 4, offset=1e6)
    np.testing.assert_allclose(fk.squared_distances(X, C), naive.sqdist(X, C), rtol=1e-6)


@pytest.mark.parametrize("k", [1, 2, 5, 24, 25, 100])
@pytest.mark.parametrize("scale", [0.1, 1.0, 10.0])
def test_softmax_and_entmax15_on_logits(k, scale, dtype):
    rng = np.random.default_rng(k)
    Z = (scale * rng.normal(size=(33, k))).astype(dtype)
    for ours, ref in [(fk.softmax, naive.softmax), (fk.entmax15, naive.entmax15)]:
        R = ours(Z)
        assert R.dtype == dtype and R.shape == Z.shape
        np.testing.assert_allclose(R, ref(Z), rtol=0, atol=10 * tolerance(dtype))


def test_logit_functions_accept_one_row():
    z = np.array([3.0, 1.0, 0.2, -5.0])
    np.testing.assert_allclose(fk.softmax(z), naive.softmax(z[None])[0], atol=1e-15)
    np.testing.assert_allclose(fk.entmax15(z), naive.entmax15(z[None])[0], atol=1e-12)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_responsibilities(shape, assignment, dtype):
    X, C, _ = make_problem(*shape, dtype=dtype, seed=1)
    D = fk.squared_distances(X, C)
    med = float(np.median(D)) + 1e-3
    for sigma in [0.0, 0.01 * med, med, 100 * med]:
        R = fk.responsibilities(X, C, sigma, assignment)
        assert R.dtype == dtype and R.shape == D.shape
        # The assignment applied to the kernel's own distances...
        ref = naive.hard(D) if assignment == "hard" or sigma == 0 else None
        if ref is None:
            f = naive.softmax if assignment == "softmax" else naive.entmax15
            ref = f(-D.astype(float) / sigma)
        np.testing.assert_allclose(R, ref, rtol=0, atol=10 * tolerance(dtype))
        # ...and, in float64, to the fully naive computation.
        if dtype == np.float64:
            np.testing.assert_allclose(
                R, naive.responsibilities(X, C, sigma, assignment), rtol=0, atol=1e-9
            )


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
@pytest.mark.parametrize("weighted", [False, True])
def test_objective_and_statistics(shape, assignment, weighted, dtype):
    X, C, w = make_problem(*shape, dtype=dtype, seed=2)
    w = w if weighted else None
    sigma = 0.5
    rtol = tolerance(dtype)
    F = fk.objective(X, C, sigma, assignment, sample_weight=w)
    assert isinstance(F, float)
    np.testing.assert_allclose(F, naive.objective(X, C, sigma, assignment, w), rtol=rtol, atol=rtol)
    N, S, F2 = fk.sufficient_statistics(X, C, sigma, assignment, sample_weight=w)
    N_ref, S_ref = naive.stats(X, C, sigma, assignment, w)
    total = N_ref.sum()
    np.testing.assert_allclose(N, N_ref, rtol=0, atol=rtol * total)
    np.testing.assert_allclose(S, S_ref, rtol=0, atol=rtol * total * np.abs(X).max())
    assert F2 == F
    G = fk.gradient(X, C, sigma, assignment, sample_weight=w)
    assert G.dtype == dtype and G.shape == C.shape
    G_ref = naive.gradient(X, C, sigma, assignment, w)
    np.testing.assert_allclose(G, G_ref, rtol=0, atol=10 * rtol * total * np.abs(X).max())


@pytest.mark.parametrize("shape", [(700, 3, 6), (700, 12, 11)])  # direct and BLAS distances
@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_statistics_when_most_rows_are_one_hot(shape, assignment, dtype):
    # At these temperatures most rows are exactly one-hot (the fused pass
    # takes its shortcut) and some are not: both kinds must be right.
    X, C, w = make_problem(*shape, dtype=dtype, seed=21)
    two = np.sort(fk.squared_distances(X, C).astype(np.float64), axis=1)[:, :2]
    gap = two[:, 1] - two[:, 0]
    reach = 746.0 if assignment == "softmax" else 2.0  # gap / sigma beyond which r is one-hot
    sigma = float(np.quantile(gap, 0.3)) / reach
    # Beyond the cut every other entry is out of reach (entmax15: no candidate;
    # softmax: exp underflows, which it already does a little before 746).
    ratio = gap / sigma
    one_hot = ratio >= reach if assignment == "softmax" else gap * (0.5 / sigma) > 1.0
    band = (ratio > 745.0) & ~one_hot if assignment == "softmax" else np.zeros_like(one_hot)
    assert 0.6 < one_hot.mean() < 0.8
    N, S, F = fk.sufficient_statistics(X, C, sigma, assignment, sample_weight=w)
    N_ref, S_ref = naive.stats(X, C, sigma, assignment, w)
    rtol = tolerance(dtype)
    total = N_ref.sum()
    np.testing.assert_allclose(N, N_ref, rtol=0, atol=rtol * total)
    np.testing.assert_allclose(S, S_ref, rtol=0, atol=rtol * total * np.abs(X).max())
    ref = naive.objective(X, C, sigma, assignment, w)
    np.testing.assert_allclose(F, ref, rtol=rtol, atol=rtol)
    _, _, summary = K.block_stats(X, C, w, sigma, naive_mode(assignment), True)
    assert w[~one_hot & ~band].sum() * (1 - 1e-12) <= summary[K.SOFT]
    assert summary[K.SOFT] <= w[~one_hot].sum() * (1 + 1e-12)


def naive_mode(assignment):
    return REGISTERED[assignment].code


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_objective_at_zero_temperature_is_the_inertia(assignment, dtype):
    X, C, w = make_problem(500, 3, 6, dtype=dtype, seed=3)
    F = fk.objective(X, C, 0.0, assignment, sample_weight=w)
    np.testing.assert_allclose(F, naive.inertia(X, C, w), rtol=tolerance(dtype))


@pytest.mark.parametrize("shape", SHAPES[1:])
def test_hard_assign_kernel(shape, dtype):
    X, C, w = make_problem(*shape, dtype=dtype, seed=4)
    labels, mind, inertia = K.hard_assign(X, C, w, True)
    D = fk.squared_distances(X, C)
    assert labels.dtype == np.int32 and mind.dtype == dtype
    np.testing.assert_array_equal(labels, D.argmin(axis=1))
    # the two kernels' BLAS products (C @ X.T and X @ C.T) may round
    # differently on some CPUs (AMD EPYC's OpenBLAS kernels do)
    np.testing.assert_allclose(mind, D.min(axis=1), rtol=tolerance(dtype))
    np.testing.assert_allclose(mind, naive.sqdist(X, C).min(axis=1), rtol=tolerance(dtype))
    np.testing.assert_allclose(inertia, naive.inertia(X, C, w), rtol=tolerance(dtype))
    light, none, unweighted = K.hard_assign(X, C, np.empty(0), False)
    np.testing.assert_allclose(unweighted, naive.inertia(X, C), rtol=tolerance(dtype))
    np.testing.assert_array_equal(light, labels)
    assert none.size == 0


def test_hard_ties_go_to_the_lowest_index():
    X = np.array([[0.0], [1.0], [2.0]])
    C = np.array([[1.0], [-1.0], [1.0], [3.0]])  # x=0 ties 0/1, x=1 ties 0/2, x=2 ties 0/2/3
    R = fk.responsibilities(X, C, 0.0, "softmax")
    np.testing.assert_array_equal(R.argmax(axis=1), [0, 0, 0])
    np.testing.assert_array_equal(K.hard_assign(X, C, np.empty(0), True)[0], [0, 0, 0])
    np.testing.assert_array_equal(fk.responsibilities(X, C, 1.0, "hard").argmax(axis=1), [0, 0, 0])


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_backward_kernels(assignment, dtype):
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(40, 30)).astype(dtype)
    G = rng.normal(size=Z.shape).astype(dtype)
    forward = fk.softmax if assignment == "softmax" else fk.entmax15
    backward = fk.softmax_backward if assignment == "softmax" else fk.entmax15_backward
    ref = naive.softmax_backward if assignment == "softmax" else naive.entmax15_backward
    R = forward(Z)
    GZ = backward(R, G)
    assert GZ.dtype == dtype
    np.testing.assert_allclose(GZ, ref(R, G), rtol=0, atol=10 * tolerance(dtype))


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_backward_matches_finite_differences(assignment):
    rng = np.random.default_rng(6)
    forward = fk.softmax if assignment == "softmax" else fk.entmax15
    backward = fk.softmax_backward if assignment == "softmax" else fk.entmax15_backward
    z = rng.normal(size=12)
    g = rng.normal(size=12)
    h = 1e-6
    fd = np.array([(g @ forward(z + h * e) - g @ forward(z - h * e)) / (2 * h) for e in np.eye(12)])
    np.testing.assert_allclose(backward(forward(z), g), fd, atol=1e-7)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_step_is_the_weighted_mean_update(assignment, dtype):
    X, C, w = make_problem(400, 3, 5, dtype=dtype, seed=7)
    new = fk.step(X, C, 0.3, assignment, sample_weight=w)
    N, S = naive.stats(X, C, 0.3, assignment, w)
    assert new.dtype == dtype
    np.testing.assert_allclose(new, S / N[:, None], rtol=0, atol=10 * tolerance(dtype))


def test_step_with_a_learning_rate_is_gradient_descent():
    X, C, w = make_problem(300, 2, 4, seed=8)
    G = fk.gradient(X, C, 0.2, "entmax15", sample_weight=w)
    np.testing.assert_allclose(
        fk.step(X, C, 0.2, "entmax15", sample_weight=w, lr=1e-3), C - 1e-3 * G, atol=1e-12
    )
    # lr = 1 / (2 N_k) for every k is the default update.
    N, _, _ = fk.sufficient_statistics(X, C, 0.2, "entmax15", sample_weight=w)
    for j in range(len(C)):
        moved = fk.step(X, C, 0.2, "entmax15", sample_weight=w, lr=1 / (2 * N[j]))
        np.testing.assert_allclose(
            moved[j], fk.step(X, C, 0.2, "entmax15", sample_weight=w)[j], atol=1e-12
        )


def test_step_leaves_a_center_without_mass_in_place():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    C = np.array([[0.3, 0.3], [100.0, 100.0]])
    for assignment in ASSIGNMENTS:
        new = fk.step(X, C, 0.01, assignment)
        np.testing.assert_array_equal(new[1], C[1])
        np.testing.assert_allclose(new[0], X.mean(axis=0))
    # Zero weights on the only points of a cell also leave its center in place.
    C = np.array([[0.0, 0.0], [1.0, 0.0]])
    new = fk.step(X, C, 0.0, "hard", sample_weight=[1.0, 0.0, 1.0])
    np.testing.assert_array_equal(new[1], C[1])


@pytest.mark.parametrize("m", [1, 2, 24, 25, 64, 300])
@pytest.mark.parametrize("spread", [0.01, 0.3, 1.0])
def test_entmax15_thresholds_agree(m, spread):
    """The sorted walk (insertion and library sort) and the certified Newton
    search find the same threshold, the one the bisection reference finds."""
    from fastrbfkm._kernels.entmax import _newton_threshold, _sorted_threshold

    rng = np.random.default_rng(m)
    n_certified = 0
    for _ in range(20):
        g = np.sort(rng.uniform(0, spread, size=m))
        g[0] = 0.0  # g = -v with max v = 0, as the row kernel hands them over
        v = -g
        r = naive.entmax15(2 * v[None])[0]
        tau_ref = (v[r > 0] - np.sqrt(r[r > 0])).mean()
        tau_sorted = _sorted_threshold(rng.permutation(g), m)
        np.testing.assert_allclose(tau_sorted, tau_ref, atol=1e-12)
        # the row as the block kernel hands it over: all half-logits, with
        # entries out of reach (v < -1) that must not count
        row = -rng.permutation(np.concatenate([g, 1.0 + rng.uniform(0, 2, size=m)]))
        tau_newton, certified = _newton_threshold(row)
        n_certified += certified
        if certified:
            np.testing.assert_allclose(tau_newton, tau_ref, atol=1e-12)
        else:  # a valid lower bound, from which the row falls back to sorting
            assert tau_newton <= tau_ref + 1e-12
    assert n_certified > 0


@pytest.mark.parametrize("shape", SHAPES)
def test_removal_costs(shape, dtype):
    X, C, w = make_problem(*shape, dtype=dtype, seed=11)
    costs = K.removal_costs(X, C, w)
    ref = naive.removal_costs(X, C, w)
    scale = naive.inertia(X, C, w) + ref.sum() + 1.0
    np.testing.assert_allclose(costs, ref, rtol=0, atol=tolerance(dtype) * scale)


@pytest.mark.parametrize("shape", SHAPES)
def test_cell_summary(shape, dtype):
    """Costs, cells' inertia and weight in one pass, and the cells' scatter
    where it is formed (not for the two widest shapes: d^2 per row)."""
    X, C, w = make_problem(*shape, dtype=dtype, seed=13)
    costs, cells, mass, A_ref = naive.cell_summary(X, C, w)
    scatter = shape[1] <= 17
    sums, A = K.cell_summary(X, C, w, scatter)
    scale = naive.inertia(X, C, w) + costs.sum() + 1.0
    atol = tolerance(dtype) * scale
    np.testing.assert_allclose(sums[0], costs, rtol=0, atol=atol)
    np.testing.assert_allclose(sums[1], cells, rtol=0, atol=atol)
    np.testing.assert_allclose(sums[2], mass, rtol=0, atol=10 * tolerance(dtype) * w.sum())
    if scatter:
        tol = 10 * tolerance(dtype) * (np.abs(A_ref).max() + 1)
        np.testing.assert_allclose(A, A_ref, rtol=0, atol=tol)
        # the same matrices as the scatter pass forms for hard cells
        N_hard, A_hard = K.center_scatter(X, C, w, 0.0, K.HARD, np.arange(C.shape[0]))
        np.testing.assert_allclose(A, A_hard, rtol=0, atol=tol)
        np.testing.assert_allclose(sums[2], N_hard, rtol=0, atol=10 * tolerance(dtype) * w.sum())
    else:
        assert A.shape == (0, 0, 0)
    unit = K.cell_summary(X, C, np.empty(0), False)[0]  # unit weights
    np.testing.assert_allclose(unit[2], naive.cell_summary(X, C)[2], rtol=0, atol=1e-9)


def test_cell_summary_scatter_by_pieces(dtype):
    """The scatter of cells of every size: under GEMM_MIN_ROWS rows (row by
    row), a few pieces of CELL_PIECE rows and a remainder (BLAS products),
    weighted, over several chunks: the naive reference's."""
    from fastrbfkm._kernels.dense import CELL_PIECE, GEMM_MIN_ROWS

    rng = np.random.default_rng(8)
    sizes = [GEMM_MIN_ROWS - 1, GEMM_MIN_ROWS, 1, 3 * CELL_PIECE + 5, 2 * MIN_CHUNK_ROWS]
    C = (20.0 * np.arange(len(sizes))[:, None] * np.ones((1, 6))).astype(dtype)
    X = np.concatenate([C[j] + rng.normal(size=(m, 6)) for j, m in enumerate(sizes)])
    small = sum(sizes[:3])  # the small cells whole in the first chunk, the rest shuffled
    X = np.concatenate([X[:small], X[small:][rng.permutation(len(X) - small)]]).astype(dtype)
    chunks = n_chunks(len(X), len(sizes) * (3 + 6 * 6))  # as cell_summary splits the rows
    assert chunks > 1 and chunk_bounds(len(X), chunks, 0)[1] >= small
    w = rng.uniform(0.5, 2.0, len(X))
    for weights in (w, np.empty(0)):
        sums, A = K.cell_summary(X, C, weights, True)
        ref = naive.cell_summary(X, C, weights if weights.size else None)
        assert np.array_equal(ref[2] > 0, np.ones(len(sizes), dtype=bool))  # every size is there
        np.testing.assert_allclose(sums[2], ref[2], rtol=1e-12)
        # float64 differences and sums on both sides, float32 rows too
        np.testing.assert_allclose(A, ref[3], rtol=0, atol=1e-9 * np.abs(ref[3]).max())


def test_cell_summary_ties_empty_cells_and_one_center(dtype):
    """A row equidistant from two centers is the lowest's, at zero cost; a
    center no row is nearest to has an empty cell; one center costs nothing."""
    X = np.array([[0.0, 0.0], [2.0, 0.0], [1.0, 0.0], [5.0, 5.0]], dtype=dtype)
    C = np.array([[0.0, 0.0], [2.0, 0.0], [50.0, 50.0]], dtype=dtype)
    w = np.array([1.0, 2.0, 3.0, 0.5])
    sums, A = K.cell_summary(X, C, w, True)
    np.testing.assert_allclose(sums[2], [4.0, 2.5, 0.0])  # the tie (row 2) goes to center 0
    np.testing.assert_allclose(sums[1], [3.0 * 1.0, 0.5 * 34.0, 0.0], rtol=1e-6)
    # row 0: second 4 (cost 4); row 2: a tie (cost 0); row 1: 4; row 3: 34, then 50
    np.testing.assert_allclose(sums[0], [4.0, 2.0 * 4.0 + 0.5 * (50.0 - 34.0), 0.0], rtol=1e-6)
    assert not A[2].any()
    one, _ = K.cell_summary(X, C[:1], w, False)
    assert not one[0].any()
    np.testing.assert_allclose(one[2], [w.sum()])


def test_cell_summary_cells_are_hard_assign_cells_on_ties(dtype):
    """Rows on an integer grid, centers among them and one duplicated, d * k
    above DIRECT_MAX (the BLAS path): every row's cell is hard_assign's,
    ties to the lowest index, in float32 too."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(700, 20)).astype(dtype)
    C = X[:10].copy()
    C[7] = C[2]  # a duplicate center: its cell is empty
    w = rng.uniform(0.5, 2.0, 700)
    labels = K.hard_assign(X, C, w, False)[0]
    sums, A = K.cell_summary(X, C, w, True)
    # a row in another cell moves at least 0.5 of mass: a rounding-level
    # tolerance tells them apart
    np.testing.assert_allclose(sums[2], np.bincount(labels, weights=w, minlength=10), rtol=1e-12)
    assert sums[2][7] == 0.0 and not A[7].any()
    np.testing.assert_allclose(K.cell_summary(X, C, w, False)[0], sums, rtol=1e-12)


@pytest.mark.parametrize("shape", SHAPES[:-2])  # d^2 per row: not the two widest
@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_center_scatter(shape, assignment, dtype):
    X, C, w = make_problem(*shape, dtype=dtype, seed=12)
    chosen = np.arange(0, C.shape[0], 2)
    mode = {"hard": K.HARD, "softmax": K.SOFTMAX, "entmax15": K.ENTMAX15}[assignment]
    sigma = 0.0 if assignment == "hard" else 0.7
    N, A = K.center_scatter(X, C, w, sigma, mode, chosen)
    N_ref, A_ref = naive.center_scatter(X, C, sigma, assignment, chosen, w)
    rtol = tolerance(dtype)
    np.testing.assert_allclose(N, N_ref, rtol=0, atol=10 * rtol * w.sum())
    np.testing.assert_allclose(A, A_ref, rtol=0, atol=10 * rtol * (np.abs(A_ref).max() + 1))


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_center_scatter_of_cold_rows_mostly_one_hot(assignment, dtype):
    # Blobs at cold temperatures: most entmax15 rows are one-hot (summed in
    # BLAS products, grouped by center, 8 rows or more a center in a
    # chunk), those between blobs soft; softmax rows never exactly so.
    rng = np.random.default_rng(3)
    means = rng.normal(scale=2.0, size=(9, 5))
    X = (means[rng.integers(9, size=1301)] + rng.normal(size=(1301, 5))).astype(dtype)
    C = (means + 0.1 * rng.normal(size=means.shape)).astype(dtype)
    w = rng.uniform(0.5, 2.0, X.shape[0])
    mode = {"softmax": K.SOFTMAX, "entmax15": K.ENTMAX15}[assignment]
    chosen = np.array([7, 0, 3, 8])
    for sigma in (4.0, 1.0):
        N, A = K.center_scatter(X, C, w, sigma, mode, chosen)
        N_ref, A_ref = naive.center_scatter(X, C, sigma, assignment, chosen, w)
        rtol = tolerance(dtype)
        np.testing.assert_allclose(N, N_ref, rtol=0, atol=10 * rtol * w.sum())
        np.testing.assert_allclose(A, A_ref, rtol=0, atol=10 * rtol * (np.abs(A_ref).max() + 1))
    if assignment == "entmax15":  # the grouped path ran, and the row-by-row one too
        R = fk.responsibilities(X, C, 1.0, assignment)
        assert 0.5 < (R.max(axis=1) == 1.0).mean() < 1.0


@pytest.mark.parametrize("shape", SHAPES[:-2])
@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_scatter_and_cells_is_both_scatters_in_one_pass(shape, assignment, dtype):
    X, C, w = make_problem(*shape, dtype=dtype, seed=14)
    mode = {"softmax": K.SOFTMAX, "entmax15": K.ENTMAX15}[assignment]
    every = np.arange(C.shape[0])
    rtol = tolerance(dtype)
    for sigma in (0.7, 0.05):
        found = K.scatter_and_cells(X, C, w, sigma, mode)
        N, A = naive.center_scatter(X, C, sigma, assignment, every, w)
        S = naive.stats(X, C, sigma, assignment, w)[1]
        cells = naive.center_scatter(X, C, 0.0, "hard", every, w)
        for got, ref in zip(found, (N, S, A, *cells), strict=True):
            np.testing.assert_allclose(got, ref, rtol=0, atol=10 * rtol * (np.abs(ref).max() + 1))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_scatter_apply(shape, assignment, dtype):
    X, C, w = make_problem(*shape, dtype=dtype, seed=13)
    chosen = np.arange(C.shape[0] - 1, -1, -2)
    V = np.random.default_rng(0).standard_normal((chosen.size, X.shape[1]))
    mode = {"hard": K.HARD, "softmax": K.SOFTMAX, "entmax15": K.ENTMAX15}[assignment]
    sigma = 0.0 if assignment == "hard" else 0.7
    hard = np.full(chosen.size, mode == K.HARD)
    unknown = np.empty(0, dtype=np.int32)
    N, U = K.scatter_apply(X, C, w, sigma, mode, chosen, hard, V, unknown)
    N_ref, U_ref = naive.scatter_apply(X, C, sigma, assignment, chosen, hard, V, w)
    rtol = tolerance(dtype)
    np.testing.assert_allclose(N, N_ref, rtol=0, atol=10 * rtol * w.sum())
    np.testing.assert_allclose(U, U_ref, rtol=0, atol=10 * rtol * (np.abs(U_ref).max() + 1))
    # the hard cells from given labels: the same pass without the distances
    labels = K.hard_assign(X, C, w, True)[0]
    given = K.scatter_apply(X, C, w, sigma, mode, chosen, hard, V, labels)
    if mode == K.HARD:
        np.testing.assert_array_equal(given[0], N)
        np.testing.assert_array_equal(given[1], U)
    if shape[1] <= 17:  # the product of center_scatter's matrices
        A = K.center_scatter(X, C, w, sigma, mode, chosen)[1]
        np.testing.assert_allclose(U, np.einsum("gst,gt->gs", A, V), rtol=1e-10, atol=1e-10)
    # the hard cells and the soft scatter in one pass
    both = np.concatenate([chosen, chosen])
    hard = np.arange(both.size) >= chosen.size
    V2 = np.concatenate([V, V[::-1]])
    N, U = K.scatter_apply(X, C, w, sigma, mode, both, hard, V2, labels)
    N_ref, U_ref = naive.scatter_apply(X, C, sigma, assignment, both, hard, V2, w)
    np.testing.assert_allclose(N, N_ref, rtol=0, atol=10 * rtol * w.sum())
    np.testing.assert_allclose(U, U_ref, rtol=0, atol=10 * rtol * (np.abs(U_ref).max() + 1))


@pytest.mark.parametrize("shape", [(1, 1, 1), (50, 2, 5), (3000, 3, 9)])
def test_kmeans_plusplus_kernel(shape, dtype):
    n, d, k = shape
    X, _, w = make_problem(n, d, k, dtype=dtype, seed=14)
    uniforms = np.random.default_rng(1).random((k, 2 + int(np.log(k))))
    seeds = greedy_seeds(X, w, uniforms)
    np.testing.assert_array_equal(seeds, naive.kmeans_plusplus(X, w, k, uniforms))
    unit = greedy_seeds(X, np.empty(0), uniforms)
    np.testing.assert_array_equal(unit, naive.kmeans_plusplus(X, None, k, uniforms))


def test_kmeans_plusplus_in_several_calls_is_one_call(monkeypatch):
    """Seeds chosen over many short kernel calls (so that Ctrl-C is handled
    between them) are those of a single call."""
    X, _, w = make_problem(3000, 3, 9, seed=14)
    uniforms = np.random.default_rng(2).random((9, 4))
    whole = greedy_seeds(X, w, uniforms)
    monkeypatch.setattr(fastrbfkm.seeding, "SEEDING_CALL_WORK", 1)  # one seed a call
    np.testing.assert_array_equal(greedy_seeds(X, w, uniforms), whole)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_stats_and_reconstruction(shape, assignment, dtype):
    X, C, w = make_problem(*shape, dtype=dtype, seed=15)
    mode = {"hard": K.HARD, "softmax": K.SOFTMAX, "entmax15": K.ENTMAX15}[assignment]
    N, S, summary, Xhat = K.stats_and_reconstruction(X, C, w, 0.6, mode)
    assert Xhat.dtype == dtype and Xhat.shape == X.shape
    ref = naive.responsibilities(X, C, 0.6, assignment) @ C.astype(np.float64)
    np.testing.assert_allclose(Xhat, ref, rtol=0, atol=10 * tolerance(dtype) * np.abs(C).max())
    # the statistics are block_stats', bit for bit
    for a, b in zip((N, S, summary), K.block_stats(X, C, w, 0.6, mode, True), strict=True):
        np.testing.assert_array_equal(a, b)


def test_vectorized_exponential_is_within_two_ulp():
    from fastrbfkm._kernels.softmax import EXP_UNDERFLOW, neg_exp

    rng = np.random.default_rng(22)
    a = np.concatenate(
        [np.linspace(0.0, 750.0, 100_003), rng.uniform(0, 1e-6, 1000), [708.4, 745.1, 745.2]]
    )
    e = 3.0 + 0.5 * a  # energies around emin = 3 at sigma = 0.5
    out = np.empty_like(a)
    neg_exp(e - 3.0, 1 / 0.5, out, np.empty_like(a))
    ref = np.exp(-((e - 3.0) / 0.5))
    normal = ref >= np.finfo(np.float64).tiny
    ulp = np.spacing(ref[normal])
    assert np.abs(out[normal] - ref[normal]).max() <= 2 * ulp.max()
    assert (np.abs(out[normal] - ref[normal]) <= 2 * ulp).all()
    # subnormal results to the same absolute precision, and exact zeros beyond the cut
    np.testing.assert_allclose(out[~normal], ref[~normal], rtol=0, atol=1e-320)
    assert (out[(e - 3.0) / 0.5 >= EXP_UNDERFLOW] == 0).all()
    assert out[0] == 1.0


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(1, 1, 1), (37, 3, 4), (120, 2, 6)])
def test_transfer_sweeps(shape, weighted, dtype):
    n, d, k = shape
    X, C, w = make_problem(n, d, k, dtype=dtype, seed=5)
    w = w if weighted else np.empty(0)
    if weighted and n > 3:
        w[::7] = 0.0  # rows of zero weight never move
    labels = naive.sqdist(X, C).argmin(axis=1).astype(np.int32)
    C_k, labels_k, sweeps, moves, tested = K.transfer_sweeps(X, w, labels, k, 50)
    C_n, labels_n, sweeps_n = naive.transfer_sweeps(X, w if weighted else None, labels, k, 50)
    np.testing.assert_array_equal(labels_k, labels_n)
    assert sweeps == sweeps_n and labels_k.dtype == np.int32
    assert tested <= n * sweeps
    assert moves >= np.count_nonzero(labels_k != labels)
    assert (labels == naive.sqdist(X, C).argmin(axis=1)).all()  # the input is left alone
    np.testing.assert_allclose(C_k, C_n, rtol=tolerance(dtype), atol=tolerance(dtype))
    # The inertia never rises, and the end is a Lloyd fixed point too.
    wn = naive.weights(w if weighted else None, n)
    before = float((wn * ((X - naive.lloyd(X, C, wn)[labels]) ** 2).sum(axis=1)).sum())
    after = float((wn * ((X - C_k[labels_k]) ** 2).sum(axis=1)).sum())
    assert after <= before * (1 + 1e-12) + 1e-12
    keep = wn > 0
    nearest = naive.sqdist(X, C_k).min(axis=1)
    mine = naive.sqdist(X, C_k)[np.arange(n), labels_k]
    np.testing.assert_allclose(mine[keep], nearest[keep], rtol=1e-9, atol=1e-9)


def test_transfer_sweeps_skip_the_rows_their_bounds_keep(dtype):
    """Rows far from moving are not tested again after the first sweep, and
    the sweeps move the rows that testing every row moves (the reference)."""
    rng = np.random.default_rng(3)
    centers = rng.normal(scale=4.0, size=(6, 3))
    X = (centers[rng.integers(0, 6, 900)] + rng.normal(size=(900, 3))).astype(dtype)
    labels = naive.sqdist(X, centers).argmin(axis=1).astype(np.int32)
    _, moved, sweeps, moves, tested = K.transfer_sweeps(X, np.empty(0), labels, 6, 50)
    assert sweeps >= 2 and moves > 0  # overlapping blobs: some rows move
    # every row is tested in the first sweep, few again after it
    assert 900 <= tested < 900 + (sweeps - 1) * 900 // 2
    _, labels_n, sweeps_n = naive.transfer_sweeps(X, None, labels, 6, 50)
    np.testing.assert_array_equal(moved, labels_n)
    assert sweeps == sweeps_n


def test_transfer_sweeps_moves_a_row_lloyd_keeps():
    # Row 1 (at 2) is nearer its own mean (1, squared distance 1) than the
    # other (3.3, squared distance 1.69), so Lloyd keeps it; but taking it out
    # saves 2 and adding it to the four rows around 3.3 costs 4/5 * 1.69:
    # the inertia falls from 2.36 to 1.712.
    X = np.array([[0.0], [2.0], [3.0], [3.6], [3.0], [3.6]])
    labels = np.array([0, 0, 1, 1, 1, 1], dtype=np.int32)
    C, moved, sweeps, moves, _ = K.transfer_sweeps(X, np.empty(0), labels, 2, 10)
    assert moved.tolist() == [0, 1, 1, 1, 1, 1] and moves == 1 and sweeps == 2
    np.testing.assert_allclose(C.ravel(), [0.0, 3.04])
    after = sum(((X[moved == j] - C[j]) ** 2).sum() for j in (0, 1))
    assert after == pytest.approx(1.712)
    # A cluster is never emptied (row 0 is alone now), and max_sweeps bounds the work.
    assert K.transfer_sweeps(X, np.empty(0), moved, 2, 10)[3] == 0
    assert K.transfer_sweeps(X, np.empty(0), labels, 2, 1)[2] == 1
