"""Sparse (scipy CSR) data: the kernels on CSR rows against the references,
the input door's checks, and the estimator, the functional API and the
mini-batch fit against the same data dense."""

import numpy as np
import pytest
from scipy import sparse

import fastrbfkm as fk
from fastrbfkm import _kernels as K
from fastrbfkm._backend import open_rows
from fastrbfkm._kernels.chunks import MIN_CHUNK_ROWS
from fastrbfkm._model import ASSIGNMENTS as REGISTERED
from fastrbfkm._rows import InMemoryRows, SparseRows
from fastrbfkm._tunables import DENSE_MAX
from fastrbfkm._validation import as_csr

from . import naive
from .helpers import tolerance

#: Every registered assignment: a new one is tested here against tests/naive.py.
ASSIGNMENTS = list(REGISTERED)
MODES = {"hard": K.HARD, "softmax": K.SOFTMAX, "entmax15": K.ENTMAX15}

CASES = [
    (1, 1, 1),  # one row, one feature, one center
    (37, 5, 3),
    (MIN_CHUNK_ROWS + 77, 23, 7),  # several chunks
    (301, DENSE_MAX + 91, 9),  # wide: the Lanczos path
]


def sparse_data(n, d, density=0.3, dtype=np.float64, seed=0):
    """``(dense, csr)``: the same data, with an empty row, a duplicated row
    and a column that is zero everywhere."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.uniform(size=(n, d)) < density)
    if n > 5:
        X[3] = 0.0
        X[5] = X[4]
    if d > 2:
        X[:, 1] = 0.0
    X = X.astype(dtype)
    return X, sparse.csr_matrix(X)


def topics(n, d, k, dtype=np.float64, seed=0):
    """Rows of k separated groups, each nonzero on its own features (about
    half of them in a row)."""
    rng = np.random.default_rng(seed)
    own = rng.integers(0, k, d)
    group = np.arange(n) % k
    X = (own[None, :] == group[:, None]) * rng.uniform(2.0, 4.0, size=(n, d))
    return (X * (rng.uniform(size=(n, d)) < 0.6)).astype(dtype)


def kernel_problem(n, d, k, dtype, seed=0):
    X, M = sparse_data(n, d, dtype=dtype, seed=seed)
    rng = np.random.default_rng(seed + 1)
    C = (X[rng.integers(0, n, size=k)] + 0.1 * rng.normal(size=(k, d))).astype(dtype)
    w = rng.uniform(0.1, 2.0, size=n)
    return X, as_csr(M, "X"), C, w


def close(actual, expected, dtype, scale=1.0):
    np.testing.assert_allclose(
        actual, expected, rtol=tolerance(dtype), atol=tolerance(dtype) * scale
    )


# ------------------------------------------------------------------ kernels


@pytest.mark.parametrize("n, d, k", CASES)
def test_distances_match_reference(n, d, k, dtype):
    X, Xs, C, w = kernel_problem(n, d, k, dtype)
    expected = naive.sqdist(X, C)
    scale = expected.max()
    close(K.squared_distances(Xs, C), expected, dtype, scale)
    labels, mind, inertia = K.hard_assign(Xs, C, w, True)
    close(mind, expected.min(axis=1), dtype, scale)
    close(inertia, w @ expected.min(axis=1), dtype, scale * n)
    D = np.sort(expected, axis=1)
    clear = D[:, 1] - D[:, 0] > 1e-3 * scale if k > 1 else np.ones(n, bool)
    np.testing.assert_array_equal(labels[clear], expected.argmin(axis=1)[clear])


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
@pytest.mark.parametrize("n, d, k", CASES)
def test_statistics_match_reference(n, d, k, assignment, dtype):
    X, Xs, C, w = kernel_problem(n, d, k, dtype)
    sigma = 0.5
    N, S, summary = K.block_stats(Xs, C, w, sigma, MODES[assignment], True)
    N_ref, S_ref = naive.stats(X, C, sigma, assignment, w)
    scale = float(np.abs(S_ref).max()) + 1.0
    close(N, N_ref, dtype, n)
    close(S, S_ref, dtype, scale)
    objective = naive.objective(X, C, sigma, assignment, w)
    close(summary[K.OBJECTIVE], objective, dtype, abs(objective) + 1.0)
    close(summary[K.INERTIA], naive.inertia(X, C, w), dtype, abs(objective) + 1.0)
    R = K.responsibilities(Xs, C, sigma, MODES[assignment])
    close(R, naive.responsibilities(X, C, sigma, assignment), dtype)


@pytest.mark.parametrize("n, d, k", CASES)
def test_passes_of_a_fit_match_reference(n, d, k, dtype):
    """Removal costs, the scatter's products (soft and hard cells) and
    greedy k-means++ on CSR rows."""
    X, Xs, C, w = kernel_problem(n, d, k, dtype)
    scale = float(naive.sqdist(X, C).max()) * n
    close(K.removal_costs(Xs, C, w), naive.removal_costs(X, C, w), dtype, scale)
    sums, _ = K.cell_summary(Xs, C, w, False)
    for got, ref in zip(sums, naive.cell_summary(X, C, w)[:3], strict=False):
        close(got, ref, dtype, scale)
    rng = np.random.default_rng(2)
    chosen = np.arange(k)[::-1].copy()
    hard = np.arange(k) % 2 == 1
    V = rng.normal(size=(k, d))
    N, U = K.scatter_apply(Xs, C, w, 0.5, K.ENTMAX15, chosen, hard, V, np.empty(0, np.int32))
    N_ref, U_ref = naive.scatter_apply(X, C, 0.5, "entmax15", chosen, hard, V, w)
    close(N, N_ref, dtype, n)
    close(U, U_ref, dtype, float(np.abs(U_ref).max()) + 1.0)
    cells = np.ones(k, dtype=bool)
    labels = K.hard_assign(Xs, C, w, True)[0]
    N, U = K.scatter_apply(Xs, C, w, 0.0, K.HARD, chosen, cells, V, labels)
    N_ref, U_ref = naive.scatter_apply(X, C, 0.0, "hard", chosen, cells, V, w)
    close(N, N_ref, dtype, n)
    close(U, U_ref, dtype, float(np.abs(U_ref).max()) + 1.0)
    uniforms = rng.random((k, 3))
    seeds = np.empty(k, dtype=np.int64)
    K.kmeans_plusplus(Xs, w, *K.seeding_norms(Xs), seeds, 0, k, uniforms, np.empty(n))
    if dtype == np.float64:  # float32 rounding may pick another of two near-equal candidates
        np.testing.assert_array_equal(seeds, naive.kmeans_plusplus(X, w, k, uniforms))
    np.testing.assert_array_equal(K.take_rows(Xs, seeds), X[seeds])


@pytest.mark.parametrize("n, d, k", CASES)
def test_transfer_sweeps_match_reference(n, d, k, dtype):
    """Hartigan's transfers on CSR rows: the reference's moves and the dense
    kernel's means (each row's distance from the nonzeros and the means' norms)."""
    X, Xs, C, w = kernel_problem(n, d, k, dtype)
    w[::5] = 0.0
    labels = naive.sqdist(X, C).argmin(axis=1).astype(np.int32)
    C_s, labels_s, sweeps, moves, _ = K.transfer_sweeps(Xs, w, labels, k, 50)
    C_n, labels_n, sweeps_n = naive.transfer_sweeps(X, w, labels, k, 50)
    np.testing.assert_array_equal(labels_s, labels_n)
    assert sweeps == sweeps_n and moves >= np.count_nonzero(labels_s != labels)
    close(C_s, C_n, dtype, float(np.abs(X).max()))
    C_d, labels_d, _, moves_d, _ = K.transfer_sweeps(X, w, labels, k, 50)
    np.testing.assert_array_equal(labels_s, labels_d)
    assert moves == moves_d
    close(C_s, C_d, dtype, float(np.abs(X).max()))


def test_row_blocks_share_the_arrays_and_fold_to_the_whole():
    X, Xs, C, w = kernel_problem(500, 40, 5, np.float64)
    block = K.row_block(Xs, 100, 250)
    assert block.shape == (150, 40) and block.data is Xs.data
    np.testing.assert_array_equal(K.take_rows(block, np.arange(150)), X[100:250])
    N = sum(
        K.block_stats(
            K.row_block(Xs, s, min(500, s + 128)), C, w[s : s + 128], 0.3, K.SOFTMAX, True
        )[0]
        for s in range(0, 500, 128)
    )
    close(N, naive.stats(X, C, 0.3, "softmax", w)[0], np.float64, 500)


@pytest.mark.parametrize("d", [7, DENSE_MAX + 9])
def test_moments_from_the_nonzeros(d):
    X, M = sparse_data(400, d, seed=3)
    X += 5.0 * (X != 0)  # nonzeros far from zero: the mean matters
    M = sparse.csr_matrix(X)
    w = np.random.default_rng(0).uniform(0.1, 2.0, 400)
    for weights in (np.empty(0), w):
        got = SparseRows(as_csr(M, "X"), weights).moments()
        want = InMemoryRows(X, weights).moments()
        np.testing.assert_allclose(got.mean, want.mean, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got.variance, want.variance, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------ the door's checks


def test_formats_and_duplicates_are_made_canonical():
    X, M = sparse_data(50, 6)
    expected = open_rows(X).squared_distances(X[:3])
    for other in (M.tocoo(), M.tocsc(), sparse.csr_array(M), M.astype(np.int64)):
        got = open_rows(other).squared_distances(X[:3])
        if other.dtype.kind == "i":
            assert got.dtype == np.float64
            continue
        np.testing.assert_allclose(got, expected, atol=1e-12)
    # unsorted column indices and a duplicate entry (scipy sums duplicates)
    data = np.array([1.0, 2.0, 0.5, 3.0])
    messy = sparse.csr_matrix((data, np.array([2, 0, 2, 1]), np.array([0, 3, 4])), shape=(2, 3))
    before = messy.indices.copy()
    canonical = as_csr(messy, "X")
    np.testing.assert_array_equal(canonical.indices, [0, 2, 1])
    np.testing.assert_array_equal(canonical.data, [2.0, 1.5, 3.0])
    np.testing.assert_array_equal(messy.indices, before)  # the user's matrix untouched
    np.testing.assert_array_equal(K.take_rows(canonical, [0, 1]), messy.toarray())


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_values_are_refused(bad):
    _, M = sparse_data(20, 4)
    M.data[2] = bad
    with pytest.raises(ValueError, match="X contains"):
        fk.RBFKMeans(2).fit(M)
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        fk.squared_distances(M, np.zeros((2, 4)))


def test_broken_and_odd_matrices_get_clear_errors():
    bad_column = sparse.csr_matrix(
        (np.ones(2), np.array([0, 5]), np.array([0, 1, 2])), shape=(2, 3)
    )
    with pytest.raises(ValueError, match="X is not a valid sparse matrix"):
        fk.squared_distances(bad_column, np.zeros((1, 3)))
    with pytest.raises(ValueError, match="at least one row"):
        fk.squared_distances(sparse.csr_matrix((0, 3)), np.zeros((1, 3)))
    huge = sparse.csr_matrix(np.array([[0.0, 1e200]]))
    with pytest.raises(ValueError, match="would overflow"):
        fk.squared_distances(huge, np.zeros((1, 2)))
    with pytest.raises(TypeError, match="only the data X may be sparse"):
        fk.squared_distances(np.ones((2, 3)), sparse.csr_matrix(np.ones((1, 3))))
    with pytest.raises(ValueError, match="backend='cuda' does not take sparse input"):
        fk.squared_distances(sparse.csr_matrix(np.ones((2, 3))), np.ones((1, 3)), backend="cuda")
    model = fk.RBFKMeans(2, random_state=0).fit(sparse.csr_matrix(np.eye(4)))
    with pytest.raises(ValueError, match="X has 3 features, but RBFKMeans is expecting 4"):
        model.predict(sparse.csr_matrix(np.eye(3)))


# ------------------------------------------------------------- the estimator


def test_weighted_lloyd_results_on_sparse_input():
    """scikit-learn's hand-checked Lloyd example, given as CSR: labels,
    inertia, centers and iterations."""
    X = sparse.csr_matrix(np.array([[0, 0], [0.5, 0], [0.5, 1], [1, 1]]))
    model = fk.RBFKMeans(2, assignment="hard", init=np.array([[0.0, 0], [1, 1]]), n_init=1)
    model.fit(X, sample_weight=[3, 1, 1, 3])
    np.testing.assert_array_equal(model.labels_, [0, 0, 1, 1])
    np.testing.assert_allclose(model.inertia_, 0.375)
    np.testing.assert_allclose(model.cluster_centers_, [[0.125, 0], [0.875, 1]])
    assert model.n_iter_ == 2


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_fit_predict_transform_score_on_csr_match_dense(assignment, dtype):
    """As scikit-learn's sparse KMeans tests: fit on CSR and on the same
    data dense (with sample weights) give the same clustering, and every
    method gives the same answers for either kind of new data."""
    X = topics(600, 12, 4, dtype, seed=4)
    M = sparse.csr_matrix(X)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 600)
    options = dict(assignment=assignment, random_state=0)
    on_sparse = fk.RBFKMeans(4, **options).fit(M, sample_weight=w)
    on_dense = fk.RBFKMeans(4, **options).fit(X, sample_weight=w)
    assert on_sparse.cluster_centers_.dtype == dtype
    scale = float(np.abs(X).max())
    close(on_sparse.cluster_centers_, on_dense.cluster_centers_, dtype, scale)
    np.testing.assert_array_equal(on_sparse.labels_, on_dense.labels_)
    close(on_sparse.inertia_, on_dense.inertia_, dtype, on_dense.inertia_)
    for new in (M, X):
        np.testing.assert_array_equal(on_sparse.predict(new), on_dense.labels_)
        close(on_sparse.transform(new), on_dense.transform(X), dtype, scale)
        close(on_sparse.score(new), on_dense.score(X), dtype, on_dense.inertia_)
        if assignment != "hard":
            close(on_sparse.predict_proba(new), on_dense.predict_proba(X), dtype, 1.0)
    np.testing.assert_array_equal(on_dense.predict(M), on_dense.labels_)
    np.testing.assert_array_equal(on_sparse.fit_predict(M, sample_weight=w), on_dense.labels_)


@pytest.mark.parametrize(("seed", "k"), [(2, 3), (1, 8)])
def test_default_fit_on_csr_ends_where_the_dense_fit_ends(seed, k):
    """The fit's last stage, Hartigan's single-row transfers, runs on CSR
    rows too: without it these weighted fits ended at other centers than
    the dense ones (12-18% apart, 23-32 rows labelled otherwise)."""
    X, M = sparse_data(400, 30, density=0.3, seed=seed)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, 400)
    on_sparse = fk.RBFKMeans(k, random_state=0).fit(M, sample_weight=w)
    on_dense = fk.RBFKMeans(k, random_state=0).fit(X, sample_weight=w)
    np.testing.assert_array_equal(on_sparse.labels_, on_dense.labels_)
    np.testing.assert_allclose(on_sparse.cluster_centers_, on_dense.cluster_centers_, atol=1e-10)
    assert on_sparse.inertia_ == pytest.approx(on_dense.inertia_, rel=1e-12)


def test_transfers_run_on_csr_rows_with_many_clusters_and_not_on_dense(monkeypatch):
    """On CSR rows the single-row transfers run whatever k is (text-like
    data gains most from them); on dense rows they stop at MANY_CLUSTERS."""
    import fastrbfkm.estimator
    import fastrbfkm.lloyd as lloyd

    monkeypatch.setattr(lloyd, "MANY_CLUSTERS", 4)
    X, M = sparse_data(400, 30, density=0.3, seed=3)
    swept = []
    original = lloyd.improve_by_transfers

    def counted(rows, start, max_sweeps):
        out = original(rows, start, max_sweeps)
        swept.append((rows.sparse, out.n_iter - start.n_iter))
        return out

    monkeypatch.setattr(fastrbfkm.estimator, "improve_by_transfers", counted)
    fk.RBFKMeans(6, random_state=0).fit(M)
    assert swept and swept[-1][0] and swept[-1][1] >= 1  # sweeps ran
    swept.clear()
    fk.RBFKMeans(6, random_state=0).fit(X)
    assert swept == [(False, 0)]  # skipped


def test_wide_sparse_annealed_fit_matches_dense():
    """Above DENSE_MAX features the annealing finds its principal axes by
    Lanczos iterations over the CSR rows, as over dense ones."""
    rng = np.random.default_rng(5)
    d = DENSE_MAX + 72
    topics = (rng.uniform(size=(3, d)) < 0.05) * rng.uniform(1, 3, size=(3, d))
    X = topics[rng.integers(0, 3, 450)] * (rng.uniform(size=(450, d)) < 0.7)
    on_sparse = fk.RBFKMeans(3, random_state=0).fit(sparse.csr_matrix(X))
    on_dense = fk.RBFKMeans(3, random_state=0).fit(X)
    np.testing.assert_allclose(on_sparse.cluster_centers_, on_dense.cluster_centers_, atol=1e-8)
    np.testing.assert_array_equal(on_sparse.labels_, on_dense.labels_)
    assert on_sparse.sigma_critical_ == pytest.approx(on_dense.sigma_critical_, rel=1e-8)


def test_callable_init_gets_the_sparse_matrix():
    _, M = sparse_data(40, 5, seed=6)
    seen = []

    def init(data, k, random_state):
        seen.append(data)
        return data[:k].toarray()

    fk.RBFKMeans(3, assignment="hard", init=init, n_init=1).fit(M)
    assert sparse.issparse(seen[0]) and (seen[0] != M).nnz == 0


# -------------------------------------------------- the functional API, mini-batch


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_functional_api_on_csr_matches_dense(assignment):
    X, M = sparse_data(200, 9, seed=7)
    C = X[[0, 10, 20]] + 0.1
    w = np.random.default_rng(2).uniform(0.5, 2.0, 200)
    np.testing.assert_allclose(
        fk.responsibilities(M, C, 0.7, assignment), fk.responsibilities(X, C, 0.7, assignment)
    )
    for name in ("objective", "gradient", "step"):
        f = getattr(fk, name)
        got = f(M, C, 0.7, assignment=assignment, sample_weight=w)
        want = f(X, C, 0.7, assignment=assignment, sample_weight=w)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=name)
    got = fk.sufficient_statistics(M, C, 0.7, assignment=assignment, sample_weight=w)
    want = fk.sufficient_statistics(X, C, 0.7, assignment=assignment, sample_weight=w)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fk.squared_distances(M, C), naive.sqdist(X, C), atol=1e-10)
    centers, index = fk.kmeans_plusplus(M, 3, random_state=0)
    np.testing.assert_array_equal(index, fk.kmeans_plusplus(X, 3, random_state=0)[1])
    np.testing.assert_array_equal(centers, X[index])
    if assignment != "hard":
        path = fk.anneal(M, C, [2.0, 1.0, 0.5], assignment=assignment, random_state=0)
        want = fk.anneal(X, C, [2.0, 1.0, 0.5], assignment=assignment, random_state=0)
        np.testing.assert_allclose(path.centers, want.centers, atol=1e-10)


def test_minibatch_on_csr_matches_dense():
    X, M = sparse_data(3000, 10, density=0.5, seed=8)
    X[:1500] += 4.0 * (X[:1500] != 0)
    M = sparse.csr_matrix(X)
    options = dict(batch_size=256, random_state=0)
    on_sparse = fk.MiniBatchRBFKMeans(3, **options).fit(M)
    on_dense = fk.MiniBatchRBFKMeans(3, **options).fit(X)
    np.testing.assert_allclose(on_sparse.cluster_centers_, on_dense.cluster_centers_, atol=1e-8)
    np.testing.assert_array_equal(on_sparse.labels_, on_dense.labels_)
    model = fk.MiniBatchRBFKMeans(3, **options)
    for start in range(0, 3000, 500):
        model.partial_fit(M[start : start + 500])
    assert np.isfinite(model.cluster_centers_).all()
