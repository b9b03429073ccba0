"""Bad input gets a clear ValueError/TypeError naming the argument; odd but
valid input (integers, float16, non-contiguous, Fortran order) works."""

import numpy as np
import pytest

import fastrbfkm as fk

from . import naive

X = np.arange(12.0).reshape(6, 2)
C = np.array([[0.0, 1.0], [5.0, 5.0]])

DATA_FUNCTIONS = {
    "responsibilities": lambda X, C, **kw: fk.responsibilities(X, C, 1.0, **kw),
    "objective": lambda X, C, **kw: fk.objective(X, C, 1.0, **kw),
    "gradient": lambda X, C, **kw: fk.gradient(X, C, 1.0, **kw),
    "step": lambda X, C, **kw: fk.step(X, C, 1.0, **kw),
    "sufficient_statistics": lambda X, C, **kw: fk.sufficient_statistics(X, C, 1.0, **kw),
    "squared_distances": lambda X, C, **kw: fk.squared_distances(X, C),
}
WEIGHTED = ["objective", "gradient", "step", "sufficient_statistics"]
SIGMA_FUNCTIONS = {
    "responsibilities": lambda s: fk.responsibilities(X, C, s),
    "objective": lambda s: fk.objective(X, C, s),
    "gradient": lambda s: fk.gradient(X, C, s),
    "step": lambda s: fk.step(X, C, s),
}

nan_X = X.copy()
nan_X[2, 1] = np.nan
inf_C = C.copy()
inf_C[0, 0] = -np.inf

BAD_DATA = [
    (nan_X, C, ValueError, "X contains NaN"),
    (X, inf_C, ValueError, "C contains NaN or inf"),
    (X[0], C, ValueError, "X must be a 2-D"),
    (X[None], C, ValueError, "X must be a 2-D"),
    (X, C[0], ValueError, "C must be a 2-D"),
    (X, C[:, :1], ValueError, "C must have as many columns as X"),
    (X[:0], C, ValueError, "X must have at least one row"),
    (X, C[:0], ValueError, "C must have at least one row"),
    (X[:, :0], C[:, :0], ValueError, "X must have at least one column"),
    (X.astype(complex), C, TypeError, "X must be real-valued"),
    (X, C.astype(complex), TypeError, "C must be real-valued"),
    (X.astype(str), C, TypeError, "X must be numeric"),
    (X.astype(object), C, TypeError, "X must be numeric"),
    ([[1.0, 2.0], [3.0]], C, TypeError, "X must be an array of numbers"),
    (X * 1e160, C, ValueError, "squared distances would overflow"),
]


@pytest.mark.parametrize("name", DATA_FUNCTIONS)
@pytest.mark.parametrize(("Xb", "Cb", "error", "match"), BAD_DATA)
def test_bad_data(name, Xb, Cb, error, match):
    with pytest.raises(error, match=match):
        DATA_FUNCTIONS[name](Xb, Cb)


@pytest.mark.parametrize("name", SIGMA_FUNCTIONS)
@pytest.mark.parametrize(
    ("sigma", "error"),
    [
        (-1.0, ValueError),
        (np.nan, ValueError),
        (np.inf, ValueError),
        (-np.inf, ValueError),
        ("1.0", TypeError),
        (None, TypeError),
        (True, TypeError),
        (1j, TypeError),
        (np.array([1.0]), TypeError),
    ],
)
def test_bad_sigma(name, sigma, error):
    with pytest.raises(error, match="sigma"):
        SIGMA_FUNCTIONS[name](sigma)


@pytest.mark.parametrize("name", ["responsibilities", "objective", "gradient", "step"])
@pytest.mark.parametrize("assignment", ["Softmax", "kmeans", "transform", "", None, 1])
def test_bad_assignment(name, assignment):
    with pytest.raises(ValueError, match="assignment must be one of"):
        DATA_FUNCTIONS[name](X, C, assignment=assignment)


@pytest.mark.parametrize("name", WEIGHTED)
@pytest.mark.parametrize(
    ("w", "error", "match"),
    [
        (-np.ones(6), ValueError, "non-negative"),
        (np.zeros(6), ValueError, "positive sum"),
        (np.ones(5), ValueError, "one entry per row"),
        (np.ones((6, 1)), ValueError, "sample_weight must be a 1-D"),
        (np.r_[np.ones(5), np.nan], ValueError, "sample_weight contains NaN"),
        (np.r_[np.ones(5), np.inf], ValueError, "sample_weight contains NaN"),
        (np.ones(6, dtype=complex), TypeError, "sample_weight must be real-valued"),
        (np.full(6, 1e308), ValueError, "sample_weight sums to more than the largest"),
    ],
)
def test_bad_sample_weight(name, w, error, match):
    with pytest.raises(error, match=match):
        DATA_FUNCTIONS[name](X, C, sample_weight=w)


def test_weights_whose_sum_overflows_are_refused_by_the_estimator():
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="sample_weight sums to more than the largest"):
        fk.RBFKMeans(2, random_state=0).fit(X, sample_weight=np.full(20, 1e308))


@pytest.mark.parametrize("lr", [0.0, -1.0, np.nan, np.inf])
def test_bad_lr_value(lr):
    with pytest.raises(ValueError, match="lr"):
        fk.step(X, C, 1.0, lr=lr)


@pytest.mark.parametrize("lr", ["0.1", True, [0.1]])
def test_bad_lr_type(lr):
    with pytest.raises(TypeError, match="lr"):
        fk.step(X, C, 1.0, lr=lr)


@pytest.mark.parametrize("f", [fk.softmax, fk.entmax15])
@pytest.mark.parametrize(
    ("Z", "error", "match"),
    [
        (np.array([[1.0, np.nan]]), ValueError, "Z contains NaN"),
        (np.array([[1.0, np.inf]]), ValueError, "Z contains NaN"),
        (np.array(1.0), ValueError, "Z must be a 1-D or 2-D"),
        (np.ones((2, 2, 2)), ValueError, "Z must be a 1-D or 2-D"),
        (np.ones((0, 3)), ValueError, "Z must have at least one row"),
        (np.ones((3, 0)), ValueError, "Z must have at least one column"),
        (np.ones((2, 3), dtype=complex), TypeError, "Z must be real-valued"),
    ],
)
def test_bad_logits(f, Z, error, match):
    with pytest.raises(error, match=match):
        f(Z)


@pytest.mark.parametrize("f", [fk.softmax_backward, fk.entmax15_backward])
def test_bad_backward_input(f):
    R = np.full((2, 3), 1 / 3)
    with pytest.raises(ValueError, match="G must have the shape of R"):
        f(R, np.ones((2, 4)))
    with pytest.raises(ValueError, match="R must be non-negative"):
        f(-R, np.ones((2, 3)))
    with pytest.raises(ValueError, match="G contains NaN"):
        f(R, np.full((2, 3), np.nan))


@pytest.mark.parametrize("f", [fk.softmax_backward, fk.entmax15_backward])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_refuses_rows_that_are_not_distributions(f, dtype):
    """They gave -inf or a Jacobian of no map; the output of softmax or
    entmax15 passes, rounding and all."""
    G = np.ones((2, 3), dtype=dtype)
    with pytest.raises(ValueError, match=r"R must be a distribution in every row.*row 1 sums to"):
        f(np.array([[0.2, 0.3, 0.5], [2.0, 3.0, 5.0]], dtype=dtype), G)
    with pytest.raises(ValueError, match="R must be non-negative with a positive sum"):
        f(np.array([[0.2, 0.3, 0.5], [0.0, 0.0, 0.0]], dtype=dtype), G)
    Z = np.random.default_rng(0).normal(size=(7, 5)).astype(dtype) * 30
    R = (fk.softmax if f is fk.softmax_backward else fk.entmax15)(Z)
    assert np.isfinite(f(R, np.ones_like(R))).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["squared_distances", "step", "objective", "responsibilities"])
def test_tiny_magnitudes_are_refused_by_the_functional_api(dtype, name):
    """Around 1e-160 every squared distance underflows: squared_distances
    returned zeros and step was off by 113%. The fits refuse such data; so
    does the functional API now, with the exact rescaling to use."""
    Xt = (np.random.default_rng(0).normal(size=(20, 3)) * 1e-160).astype(np.float64)
    if dtype == np.float32:
        Xt = (Xt * 1e140).astype(np.float32)  # ~1e-20: squares below float32's tiny
    Ct = Xt[:2].copy()
    with pytest.raises(ValueError, match=r"X has values only up to .*multiply it by 2\.0\*\*"):
        DATA_FUNCTIONS[name](Xt, Ct)
    # rescaled by the power of two the message names, the answer is exact
    scale = 2.0 ** -int(np.floor(np.log2(np.abs(Xt).max())))
    D = fk.squared_distances(Xt * scale, Ct * scale)
    np.testing.assert_allclose(D, naive.sqdist(Xt * scale, Ct * scale), rtol=1e-5)
    # tiny data measured against ordinary centers is measured as given
    ordinary = np.ones((2, 3), dtype=dtype)
    np.testing.assert_allclose(fk.squared_distances(Xt, ordinary), 3.0, rtol=1e-6)
    # and all-zero data is exact, not refused
    assert not fk.squared_distances(np.zeros((4, 3), dtype), np.zeros((2, 3), dtype)).any()


def test_foreign_errors_are_named():
    X = np.random.default_rng(0).normal(size=(30, 2))
    for bad in ("seed", object(), 1.5, True):
        with pytest.raises(TypeError, match="random_state must be None, an int or a numpy"):
            fk.kmeans_plusplus(X, 3, random_state=bad)
    with pytest.raises(ValueError, match="random_state must be a non-negative int"):
        fk.kmeans_plusplus(X, 3, random_state=-1)
    with pytest.raises(TypeError, match="random_state"):
        fk.anneal(X, X[:2], [2.0, 1.0], random_state="seed")


def test_integer_and_float16_inputs_are_converted():
    Xi = np.arange(12).reshape(6, 2)
    Ci = np.array([[0, 1], [5, 5]])
    D = fk.squared_distances(Xi, Ci)
    assert D.dtype == np.float64
    np.testing.assert_allclose(D, naive.sqdist(Xi, Ci))
    D16 = fk.squared_distances(Xi.astype(np.float16), Ci.astype(np.float16))
    assert D16.dtype == np.float32
    np.testing.assert_allclose(D16, naive.sqdist(Xi, Ci), rtol=1e-5)
    assert fk.softmax(np.arange(4)).dtype == np.float64
    assert fk.entmax15(np.arange(4, dtype=np.float16)).dtype == np.float32
    # Booleans are numbers (0 and 1), as in numpy.
    assert fk.responsibilities(Xi > 5, Ci > 2, 1.0).dtype == np.float64


def test_centers_take_the_data_dtype():
    assert fk.step(X.astype(np.float32), C, 1.0).dtype == np.float32
    assert fk.step(X, C.astype(np.float32), 1.0).dtype == np.float64


def test_non_contiguous_and_fortran_inputs():
    rng = np.random.default_rng(0)
    big = rng.normal(size=(40, 6))
    Xs = big[::3, ::2]  # strided view
    Xf = np.asfortranarray(big[:, :3])
    Cf = np.asfortranarray(rng.normal(size=(4, 3)))
    for Xv in (Xs, Xf):
        assert not Xv.flags.c_contiguous
        np.testing.assert_allclose(fk.squared_distances(Xv, Cf), naive.sqdist(Xv, Cf), atol=1e-12)
        np.testing.assert_allclose(
            fk.objective(Xv, Cf, 0.5, "entmax15"),
            naive.objective(Xv, Cf, 0.5, "entmax15"),
            rtol=1e-12,
        )
    Zf = np.asfortranarray(rng.normal(size=(5, 7)))
    np.testing.assert_allclose(fk.entmax15(Zf), naive.entmax15(Zf), atol=1e-12)
    np.testing.assert_allclose(fk.softmax(Zf[:, ::2]), naive.softmax(Zf[:, ::2]), atol=1e-15)


def test_lists_and_numpy_scalars_are_accepted():
    R = fk.responsibilities(X.tolist(), C.tolist(), np.float32(2.0), assignment="entmax15")
    np.testing.assert_allclose(R, naive.responsibilities(X, C, 2.0, "entmax15"), atol=1e-12)
    assert fk.objective(X, C, np.array(0.5)) == fk.objective(X, C, 0.5)
    assert fk.objective(X, C, 2) == fk.objective(X, C, 2.0)


def test_one_default_assignment_everywhere():
    """The functional API defaulted to softmax while the estimator, anneal,
    critical_temperature and the torch layer default to entmax15."""
    import inspect

    functions = [
        fk.responsibilities,
        fk.objective,
        fk.gradient,
        fk.step,
        fk.sufficient_statistics,
        fk.anneal,
        fk.critical_temperature,
        fk.RBFKMeans,
    ]
    for f in functions:
        assert inspect.signature(f).parameters["assignment"].default == "entmax15", f
    R = fk.responsibilities(X, C, 0.7)
    np.testing.assert_array_equal(R, fk.responsibilities(X, C, 0.7, "entmax15"))


def test_only_the_data_may_be_sparse():
    """Sparse X is taken (tests/test_sparse.py); sparse centers, initial
    centers or logits are refused by name."""
    sparse = pytest.importorskip("scipy.sparse")
    Xs = sparse.csr_matrix(X)
    assert fk.critical_temperature(Xs, 2) == pytest.approx(fk.critical_temperature(X, 2))
    with pytest.raises(TypeError, match=r"C is a scipy\.sparse csr_array.*C\.toarray\(\)"):
        fk.responsibilities(X, sparse.csr_array(C), 1.0)
    with pytest.raises((TypeError, ValueError), match=r"init"):
        fk.RBFKMeans(2, init=sparse.csr_matrix(C)).fit(Xs)
    with pytest.raises(TypeError, match=r"Z is a scipy\.sparse"):
        fk.softmax(sparse.csr_matrix(C))
