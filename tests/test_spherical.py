"""metric="cosine": spherical K-Means, soft and annealed, against the
references on the sphere in tests/naive.py."""

import numpy as np
import pytest
from scipy import sparse

import fastrbfkm as fk
from fastrbfkm import MiniBatchRBFKMeans, RBFKMeans

from . import naive

DTYPES = [np.float32, np.float64]
TOL = {np.float32: 2e-5, np.float64: 1e-10}


def directions(n=3001, d=7, k=5, spread=0.3, seed=0, dtype=np.float64):
    """Rows around k directions, at lengths from 0.5 to 3 (which the
    sphere ignores), and the directions' labels."""
    rng = np.random.default_rng(seed)
    axes = naive.unit(rng.normal(size=(k, d)))
    y = rng.integers(k, size=n)
    X = (axes[y] + spread * rng.normal(size=(n, d))) * rng.uniform(0.5, 3.0, size=(n, 1))
    return X.astype(dtype), y


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_distances_and_responsibilities_are_the_spheres(dtype, layout):
    X, _ = directions(n=257, dtype=dtype)
    X[np.abs(X) < 0.2] = 0  # sparse enough for CSR
    X = X[np.abs(X).max(axis=1) > 0]
    C = X[:6] * 3.0  # centers at any length: used at unit length
    data = sparse.csr_matrix(X) if layout == "csr" else X
    D = fk.squared_distances(data, C, metric="cosine")
    np.testing.assert_allclose(D, 2 * naive.cosine_distances(X, C), atol=TOL[dtype] * 10)
    for assignment in ("hard", "softmax", "entmax15"):
        R = fk.responsibilities(data, C, 0.3, assignment, metric="cosine")
        expected = naive.responsibilities(naive.unit(X), naive.unit(C), 0.3, assignment)
        np.testing.assert_allclose(R, expected, atol=TOL[dtype] * 100)
        assert R.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_step_is_the_normalised_mean_and_the_gradient_is_along_the_sphere(dtype, assignment):
    X, _ = directions(n=401, dtype=dtype)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(X))
    C = X[[0, 1, 2, 3]].copy()
    C[3] = -C[2] * 7  # far from everything: at sigma 0 its cell is empty
    new = fk.step(X, C, 0.2, assignment, sample_weight=w, metric="cosine")
    expected = naive.spherical_step(X, C, 0.2, assignment, w)
    np.testing.assert_allclose(new, expected, atol=TOL[dtype] * 100)
    np.testing.assert_allclose(np.linalg.norm(new.astype(np.float64), axis=1), 1.0, atol=1e-6)
    G = fk.gradient(X, C, 0.2, assignment, sample_weight=w, metric="cosine").astype(np.float64)
    Cu = naive.unit(C)
    np.testing.assert_allclose((G * Cu).sum(axis=1), 0.0, atol=TOL[dtype] * 1e3 * len(X))
    euclid = naive.gradient(naive.unit(X), Cu, 0.2, assignment, w)
    along = euclid - (euclid * Cu).sum(axis=1, keepdims=True) * Cu
    np.testing.assert_allclose(G, along, atol=TOL[dtype] * 1e3 * len(X))


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_critical_temperature_on_the_sphere(assignment):
    X, _ = directions(n=2000, d=5, k=2, spread=0.4)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=len(X))
    got = fk.critical_temperature(X, 3, assignment, sample_weight=w, metric="cosine")
    assert got == pytest.approx(naive.spherical_critical(X, assignment, 3, w), rel=1e-9)
    # not the Euclidean value of the unit rows: the mean is shorter than 1
    assert got > fk.critical_temperature(naive.unit(X), 3, assignment, sample_weight=w) * 1.05


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_the_pair_splits_just_below_the_spheres_critical_temperature(assignment):
    """Two centers a hair apart at the mean's direction close up above
    sigma_c and open up below it: the derivation checked numerically."""
    rng = np.random.default_rng(1)
    X = np.vstack(
        [
            [1.0, 0.3, 0.0] + 0.15 * rng.normal(size=(1500, 3)),
            [0.2, 1.0, 0.1] + 0.15 * rng.normal(size=(1500, 3)),
        ]
    )
    sigma_c = fk.critical_temperature(X, 2, assignment, metric="cosine")
    c = naive.unit(naive.unit(X).mean(axis=0, keepdims=True))[0]
    nudge = np.cross(c, [0.0, 0.0, 1.0])
    nudge *= 1e-4 / np.linalg.norm(nudge)
    gaps = []
    for factor in (1.03, 0.97):
        km = RBFKMeans(
            2,
            assignment=assignment,
            sigma=factor * sigma_c,
            init=np.vstack([c + nudge, c - nudge]),
            metric="cosine",
            refine=False,
            max_iter=20000,
            tol=0,
        ).fit(X)
        gaps.append(np.linalg.norm(km.cluster_centers_[0] - km.cluster_centers_[1]))
    assert gaps[0] < 1e-8 < 0.1 < gaps[1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_default_fit_finds_the_directions_with_unit_centers(dtype):
    X, y = directions(spread=0.15, dtype=dtype)
    before = X.copy()
    km = RBFKMeans(5, metric="cosine", random_state=0).fit(X)
    np.testing.assert_array_equal(X, before)  # the user's data untouched
    assert km.cluster_centers_.dtype == dtype
    np.testing.assert_allclose(np.linalg.norm(km.cluster_centers_, axis=1), 1.0, atol=1e-6)
    cos = naive.cosine_distances(X, km.cluster_centers_)
    assert km.inertia_ == pytest.approx(cos.min(axis=1).sum(), rel=1e-5)
    assert km.score(X) == pytest.approx(-km.inertia_, rel=1e-5)
    np.testing.assert_allclose(km.transform(X), cos, atol=TOL[dtype] * 10)
    np.testing.assert_array_equal(km.predict(X), km.labels_)
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(y, km.labels_) > 0.99
    # at least as low as scikit-learn's best of 10 on the unit rows (its
    # centers scaled to unit length for the cosine objective)
    from sklearn.cluster import KMeans

    sk = KMeans(5, n_init=10, random_state=0).fit(naive.unit(X)).cluster_centers_
    assert km.inertia_ <= naive.cosine_distances(X, sk).min(axis=1).sum() * (1 + 1e-5)
    # lengths do not matter: the same rows at other lengths give the same fit
    scaled = RBFKMeans(5, metric="cosine", random_state=0).fit(X * 1e3)
    np.testing.assert_allclose(scaled.cluster_centers_, km.cluster_centers_, atol=TOL[dtype] * 100)


def test_sparse_dask_and_mini_batch_fits_on_the_sphere():
    X, _ = directions(n=4000, d=12)
    X[np.abs(X) < 0.3] = 0
    X = X[np.abs(X).max(axis=1) > 0]
    dense = RBFKMeans(5, metric="cosine", random_state=0).fit(X)
    csr = RBFKMeans(5, metric="cosine", random_state=0).fit(sparse.csr_matrix(X))
    np.testing.assert_allclose(csr.cluster_centers_, dense.cluster_centers_, atol=1e-8)
    assert csr.inertia_ == pytest.approx(dense.inertia_, rel=1e-9)
    da = pytest.importorskip("dask.array")
    lazy = RBFKMeans(5, metric="cosine", assignment="hard", random_state=0).fit(
        da.from_array(X, chunks=1000)
    )
    np.testing.assert_allclose(np.linalg.norm(lazy.cluster_centers_, axis=1), 1.0, atol=1e-9)
    cos = naive.cosine_distances(X, lazy.cluster_centers_)
    assert lazy.inertia_ == pytest.approx(cos.min(axis=1).sum(), rel=1e-9)
    batches = MiniBatchRBFKMeans(5, metric="cosine", random_state=0).fit(X)
    np.testing.assert_allclose(np.linalg.norm(batches.cluster_centers_, axis=1), 1.0, atol=1e-9)
    assert batches.inertia_ <= 1.01 * dense.inertia_


def test_bad_input_on_the_sphere_is_named():
    X, _ = directions(n=50)
    X[7] = 0
    with pytest.raises(ValueError, match=r"X has a row of zero length \(row 7\)"):
        RBFKMeans(3, metric="cosine").fit(X)
    with pytest.raises(ValueError, match="X has a row of zero length"):
        RBFKMeans(3, metric="cosine").fit(sparse.csr_matrix(X))
    with pytest.raises(ValueError, match="metric"):
        RBFKMeans(3, metric="manhattan").fit(X)
    with pytest.raises(ValueError, match="metric must be 'euclidean' or 'cosine'"):
        fk.squared_distances(X[:6], X[:2], metric="angular")
    with pytest.raises(ValueError, match=r"C has a center of zero length \(row 1\)"):
        fk.step(X[8:20], np.vstack([X[8], np.zeros(X.shape[1])]), 0.0, "hard", metric="cosine")


@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_the_pytorch_loss_on_the_sphere(assignment):
    torch = pytest.importorskip("torch")
    from fastrbfkm import torch as ft

    X, _ = directions(n=301, d=6)
    C = X[:4] * 2.0
    sigma = 0.0 if assignment == "hard" else 0.4
    want = naive.objective(naive.unit(X), naive.unit(C), sigma, assignment) / len(X)
    grads = []
    for torch_ops in (False, True):  # the numba kernels, then torch ops
        Xt = torch.tensor(X, requires_grad=True)
        Ct = torch.tensor(C, requires_grad=True)
        Xu, Cu = ft._on_sphere(Xt, Ct, "cosine")
        loss = ft._loss(Xu, Cu, sigma, assignment, None, torch_ops)
        assert float(loss.detach()) == pytest.approx(want, rel=1e-9)
        loss.backward()
        grads.append((Xt.grad.numpy(), Ct.grad.numpy()))
        # the loss does not depend on the lengths: no gradient along the rows
        np.testing.assert_allclose((Ct.grad.numpy() * C).sum(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(grads[0][0], grads[1][0], atol=1e-10)
    np.testing.assert_allclose(grads[0][1], grads[1][1], atol=1e-10)
    public = ft.rbf_kmeans_loss(
        torch.tensor(X), torch.tensor(C), sigma, assignment, metric="cosine"
    )
    assert float(public) == pytest.approx(want, rel=1e-9)


def test_the_pytorch_layer_on_the_sphere():
    torch = pytest.importorskip("torch")
    from fastrbfkm.torch import RBFKMeansLayer

    X, _ = directions(n=1000, d=6, spread=0.15)
    layer = RBFKMeansLayer(5, 6, sigma=0.1, metric="cosine").double()
    layer.init_from(torch.tensor(X), init="fit", random_state=0)
    km = RBFKMeans(5, metric="cosine", random_state=0).fit(X)
    np.testing.assert_allclose(layer.centers.detach().numpy(), km.cluster_centers_, atol=1e-9)
    R = layer(torch.tensor(X * 5.0))
    np.testing.assert_allclose(R.sum(dim=1).detach().numpy(), 1.0, atol=1e-12)
    assert "metric='cosine'" in repr(layer)
    with pytest.raises(ValueError, match="metric"):
        RBFKMeansLayer(5, 6, metric="dot")
    zero = torch.tensor(X[:10]).clone()
    zero[3] = 0
    with pytest.raises(ValueError, match="X has a row of zero length"):
        layer(zero)


@pytest.mark.parametrize("dtype", DTYPES)
def test_huge_and_tiny_rows_have_directions(dtype):
    """Directions are defined at any finite length: the magnitude limits of
    Euclidean fits do not apply to rows scaled to unit length."""
    X, _ = directions(n=300, d=4, dtype=dtype)
    ref = RBFKMeans(3, metric="cosine", random_state=0, assignment="hard").fit(X)
    big = 1e30 if dtype == np.float32 else 1e200
    for scale in (1 / big, big):
        for data in (X * dtype(scale), sparse.csr_matrix(X * dtype(scale))):
            km = RBFKMeans(3, metric="cosine", random_state=0, assignment="hard").fit(data)
            np.testing.assert_allclose(km.cluster_centers_, ref.cluster_centers_, atol=1e-5)
            np.testing.assert_array_equal(km.predict(data), ref.labels_)
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):  # scikit-learn's words
        RBFKMeans(3, metric="cosine").fit(bad)
    with pytest.raises(ValueError, match="X contains NaN"):
        fk.squared_distances(bad, X[:2], metric="cosine")


def test_the_annealing_sample_and_the_batches_stay_on_the_sphere():
    """The rows sources made from a cosine source (the annealing's sample of
    a large fit, a mini-batch) keep its sphere: every annealed center is a
    unit vector."""
    X, _ = directions(n=3000, d=5, k=4)
    km = RBFKMeans(4, metric="cosine", anneal_size=500, record_path=True, random_state=0).fit(X)
    norms = np.linalg.norm(km.path_.centers, axis=2)
    np.testing.assert_allclose(norms, 1.0, atol=1e-12)
    batches = MiniBatchRBFKMeans(4, metric="cosine", batch_size=256, full_step=False)
    batches.fit(X)
    np.testing.assert_allclose(np.linalg.norm(batches.cluster_centers_, axis=1), 1.0, atol=1e-12)


# eight batches leave the annealing running: scoring says so, which is not this test's concern
@pytest.mark.filterwarnings("ignore:MiniBatchRBFKMeans is still annealing")
def test_partial_fit_on_the_sphere():
    X, _ = directions(n=2000, d=6, k=3, spread=0.15)
    model = MiniBatchRBFKMeans(3, metric="cosine", random_state=0)
    for start in range(0, len(X), 250):
        model.partial_fit(X[start : start + 250] * 7.0)  # lengths do not matter
    np.testing.assert_allclose(np.linalg.norm(model.cluster_centers_, axis=1), 1.0, atol=1e-12)
    cos = naive.cosine_distances(X[-250:], model.cluster_centers_)
    np.testing.assert_array_equal(model.labels_, cos.argmin(axis=1))
    assert model.score(X) == pytest.approx(
        -naive.cosine_distances(X, model.cluster_centers_).min(axis=1).sum(), rel=1e-9
    )
