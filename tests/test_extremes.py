"""Extreme but valid input works: no NaN, no inf, rows still distributions."""

import numpy as np
import pytest

import fastrbfkm as fk
from fastrbfkm._model import ASSIGNMENTS as REGISTERED

from . import naive
from .helpers import make_problem

#: Every registered assignment: a new one is tested here against tests/naive.py.
ASSIGNMENTS = list(REGISTERED)


def check_all_finite(X, C, sigma, w=None):
    """Every public function gives finite results and proper rows."""
    for assignment in ASSIGNMENTS:
        R = fk.responsibilities(X, C, sigma, assignment)
        assert np.isfinite(R).all(), assignment
        assert (R >= 0).all()
        np.testing.assert_allclose(R.sum(axis=1), 1.0, rtol=1e-5)
        F = fk.objective(X, C, sigma, assignment, sample_weight=w)
        assert np.isfinite(F), assignment
        assert np.isfinite(fk.gradient(X, C, sigma, assignment, sample_weight=w)).all()
        assert np.isfinite(fk.step(X, C, sigma, assignment, sample_weight=w)).all()
    return R


@pytest.mark.parametrize("sigma", [1e-300, 1e-30, 1e-8, 1e8, 1e30, 1e300])
def test_extreme_temperatures(sigma, dtype):
    X, C, w = make_problem(150, 3, 6, dtype=dtype)
    check_all_finite(X, C, sigma, w)
    J = naive.inertia(X, C, w)
    for assignment in ("softmax", "entmax15"):
        F = fk.objective(X, C, sigma, assignment, sample_weight=w)
        H = naive.h_max(assignment, len(C))
        slack = 1e-5 * J + 1e-12 * sigma * H * w.sum()  # float32 distances, float64 sums
        assert J - sigma * H * w.sum() - slack <= F <= J + slack
        R = fk.responsibilities(X, C, sigma, assignment)
        if sigma <= 1e-8:  # frozen: the hard assignment
            np.testing.assert_array_equal(R, naive.hard(naive.sqdist(X, C)))
        if sigma >= 1e30:  # melted: uniform
            np.testing.assert_allclose(R, 1 / len(C), rtol=1e-6)


def test_softmax_of_huge_logits_is_stable():
    Z = np.array([[1e308, -1e308, 0.0], [-1e300, -1e300, -1e300], [700.0, 710.0, 720.0]])
    for f in (fk.softmax, fk.entmax15):
        R = f(Z)
        assert np.isfinite(R).all()
        np.testing.assert_allclose(R.sum(axis=1), 1.0)
        np.testing.assert_allclose(R[0], [1.0, 0.0, 0.0])
        np.testing.assert_allclose(R[1], 1 / 3)


@pytest.mark.parametrize("magnitude", [1e-30, 1e15])
def test_extreme_coordinates_float64(magnitude):
    X, C, w = make_problem(120, 2, 5, seed=3)
    X, C = X * magnitude, C * magnitude
    D = naive.sqdist(X, C)
    sigma = float(np.median(D))
    check_all_finite(X, C, sigma, w)
    np.testing.assert_allclose(fk.squared_distances(X, C), D, rtol=1e-9, atol=1e-9 * D.max())
    for assignment in ASSIGNMENTS:
        np.testing.assert_allclose(
            fk.responsibilities(X, C, sigma, assignment),
            naive.responsibilities(X, C, sigma, assignment),
            atol=1e-8,
        )
        np.testing.assert_allclose(
            fk.objective(X, C, sigma, assignment, sample_weight=w),
            naive.objective(X, C, sigma, assignment, w),
            rtol=1e-8,
        )


def test_tiny_coordinates_float32_do_not_produce_nan():
    """Down to the smallest magnitude whose squares stay normal (about 1e-19
    in float32); below it the data is refused, see the test further down."""
    X, C, _ = make_problem(50, 2, 3, dtype=np.float32)
    check_all_finite(X * np.float32(1e-17), C * np.float32(1e-17), 1e-34)


def test_duplicates_and_more_clusters_than_distinct_points(dtype):
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0]], dtype=dtype), 10, axis=0)
    C = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [3.0, 3.0], [1.0, 1.0]], dtype=dtype)
    for sigma in (0.0, 1e-3, 1.0):
        R = check_all_finite(X, C, sigma)
    # Coincident centers share their points evenly when soft...
    R = fk.responsibilities(X, C, 1e-3, "entmax15")
    np.testing.assert_allclose(R[0], [0.5, 0.5, 0, 0, 0], atol=1e-6)
    # ...and the lowest index wins when hard; the empty center stays put.
    new = fk.step(X, C, 0.0, "hard")
    np.testing.assert_array_equal(new, C)
    np.testing.assert_array_equal(fk.responsibilities(X, C, 0.0, "hard")[0], [1, 0, 0, 0, 0])


def test_single_cluster_and_single_feature(dtype):
    X, C, w = make_problem(77, 1, 1, dtype=dtype)
    R = check_all_finite(X, C, 1.0, w)
    np.testing.assert_array_equal(R, 1.0)
    np.testing.assert_allclose(
        fk.step(X, C, 1.0, sample_weight=w)[0, 0],
        np.average(X[:, 0].astype(float), weights=w),
        rtol=1e-5,
    )
    # One point, one feature, many centers.
    check_all_finite(np.array([[3.0]], dtype=dtype), np.arange(6.0, dtype=dtype)[:, None], 0.5)


def test_new_rows_are_measured_in_the_fits_dtype():
    """float32 rows given to a float64 fit get the labels and distances the
    same rows get in float64, even where float32 squared distances overflow."""
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(-3, 1, (40, 2)), rng.normal(3, 1, (40, 2))]) * 1e20
    model = fk.RBFKMeans(2, assignment="hard", random_state=0).fit(X)
    rows = X.astype(np.float32)
    np.testing.assert_array_equal(model.predict(rows), model.predict(rows.astype(np.float64)))
    D = model.transform(rows)
    assert D.dtype == np.float64 and np.isfinite(D).all()
    np.testing.assert_allclose(D, model.transform(rows.astype(np.float64)), rtol=1e-12)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_data_is_named(bad):
    X = np.ones((6, 2))
    X[2, 1] = bad
    with pytest.raises(ValueError, match="Input X contains"):
        fk.RBFKMeans(2).fit(X)
    model = fk.RBFKMeans(2, random_state=0).fit(np.arange(12.0).reshape(6, 2))
    with pytest.raises(ValueError, match="Input X contains"):
        model.predict(X)


@pytest.mark.parametrize("name", ["softmax", "entmax15"])
def test_backward_of_huge_finite_gradients_is_finite(name):
    """g - sum(r g) overflowed to -inf for gradients near the float64 maximum,
    though the product with r (or sqrt r) is representable."""
    forward = getattr(fk, name)
    backward = getattr(fk, f"{name}_backward")
    R = forward(np.array([[3.0, 2.5, -1.0, -2.0]]))  # a clear winner
    G = np.array([[1.7e308, -1.7e308, 0.0, 1e308]])
    out = backward(R, G)
    assert np.isfinite(out).all()
    # the same as the exact product on gradients scaled down (a power of two)
    np.testing.assert_allclose(out, 4 * backward(R, G / 4), rtol=1e-12)


def separated(dtype, scale):
    rng = np.random.default_rng(4)
    X = np.concatenate([rng.normal(-4, 1, (60, 2)), rng.normal(4, 1, (60, 2))])
    return (X * scale).astype(dtype)


@pytest.mark.parametrize(("dtype", "scale"), [(np.float64, 1e-160), (np.float32, 1e-25)])
def test_data_too_tiny_to_fit_is_refused_with_the_rescaling(dtype, scale, tmp_path):
    """Coordinates whose squares underflow once gave all-zero distances and a
    one-cluster fit without a word; every fit entry point now names X and the
    power of two to multiply it by, after which the fit is the fit of the
    same data at unit scale."""
    X = separated(dtype, scale)
    fits = {
        "RBFKMeans": lambda X: fk.RBFKMeans(2, random_state=0).fit(X),
        "hard": lambda X: fk.RBFKMeans(2, assignment="hard", random_state=0).fit(X),
        "kmeans_plusplus": lambda X: fk.kmeans_plusplus(X, 2, random_state=0),
        "critical_temperature": lambda X: fk.critical_temperature(X, 2),
        "anneal": lambda X: fk.anneal(X, X[:2], [1.0, 0.5]),
    }
    for fit in fits.values():
        with pytest.raises(ValueError, match=r"X has values only up to .* multiply it by 2\.0\*\*"):
            fit(X)
    np.save(tmp_path / "X.npy", X)  # a memory-mapped file streamed block by block
    from fastrbfkm._streaming import StreamedRows

    streamed = StreamedRows(np.load(tmp_path / "X.npy", mmap_mode="r"), np.empty(0), block_rows=50)
    with pytest.raises(ValueError, match="X has values only up to"):
        streamed.moments()
    with pytest.raises(ValueError, match=r"multiply it by 2\.0\*\*") as info:
        fits["RBFKMeans"](X)
    factor = 2.0 ** int(str(info.value).split("2.0**")[1].split(" ")[0])
    rescaled = fk.RBFKMeans(2, random_state=0).fit(X * dtype(factor))
    want = fk.RBFKMeans(2, random_state=0).fit(separated(dtype, 1.0))
    assert abs(np.corrcoef(rescaled.labels_, want.labels_)[0, 1]) == pytest.approx(1.0)
    # new rows of that size are measured, not refused: only a fit needs their spread
    np.testing.assert_array_equal(rescaled.predict(X), rescaled.predict(np.zeros_like(X)))


def test_all_zero_data_is_not_tiny():
    """Zero is no magnitude: a fit on it is one cluster (with a warning)."""
    with pytest.warns(Warning, match="distinct clusters"):
        km = fk.RBFKMeans(2, random_state=0).fit(np.zeros((10, 3)))
    np.testing.assert_array_equal(km.cluster_centers_, 0.0)


def test_subnormal_weights_are_refused():
    """Weights summing below 1e-292 once gave a step 0.06 off the unweighted
    one (subnormal weighted sums); now an error names sample_weight."""
    X, C, _ = make_problem(50, 2, 3)
    with pytest.raises(ValueError, match="sample_weight sums to only"):
        fk.step(X, C, 0.5, sample_weight=np.full(50, 1e-320))
    with pytest.raises(ValueError, match="sample_weight sums to only"):
        fk.RBFKMeans(3).fit(X, sample_weight=np.full(50, 1e-310))
    scaled = fk.step(X, C, 0.5, sample_weight=np.full(50, 1e-280))  # small but normal
    np.testing.assert_allclose(scaled, fk.step(X, C, 0.5), rtol=1e-12)
