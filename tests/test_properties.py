"""Hypothesis properties of the assignments, the objective and the step."""

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import fastrbfkm as fk

from . import naive

finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def problems(draw, max_n=40, max_d=4, max_k=7):
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    k = draw(st.integers(1, max_k))
    X = draw(arrays(np.float64, (n, d), elements=st.floats(-10, 10)))
    C = draw(arrays(np.float64, (k, d), elements=st.floats(-10, 10)))
    w = draw(st.none() | arrays(np.float64, n, elements=st.floats(0.0, 5.0)))
    # Data and centers all so tiny that their squares underflow are refused
    # (tests/test_validation.py), not measured.
    largest = max(np.abs(X).max(), np.abs(C).max())
    assume(largest == 0.0 or largest > 1e-150)
    if w is not None:
        assume(w.sum() > 1e-3)
    sigma = draw(st.sampled_from([0.0, 1e-6, 1e-2, 1.0, 30.0, 1e4]))
    return X, C, w, sigma


@given(Z=arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 30)), elements=finite))
def test_rows_are_distributions(Z):
    for f in (fk.softmax, fk.entmax15):
        R = f(Z)
        assert (R >= 0).all()
        np.testing.assert_allclose(R.sum(axis=1), 1.0, atol=1e-12)


@given(Z=arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 30)), elements=finite))
def test_entmax15_kkt_and_sparsity(Z):
    R = fk.entmax15(Z)
    for z, r in zip(Z, R, strict=True):
        support = r > 0
        assert support.any()
        # Far entries (more than 2 below the maximum logit) are exactly zero.
        assert (r[z < z.max() - 2 - 1e-9] == 0).all()
        # KKT: sqrt(r_k) = z_k / 2 - tau on the support, z_k / 2 <= tau off it.
        tau = z[support] / 2 - np.sqrt(r[support])
        np.testing.assert_allclose(tau, tau.mean(), atol=1e-9)
        assert (z[~support] / 2 <= tau.mean() + 1e-9).all()
        # The maximizer of the entmax15 objective is in the support.
        assert support[np.argmax(z)]


@given(problems())
def test_responsibilities_rows_are_distributions(problem):
    X, C, _, sigma = problem
    for assignment in ("hard", "softmax", "entmax15"):
        R = fk.responsibilities(X, C, sigma, assignment)
        assert np.isfinite(R).all() and (R >= 0).all()
        np.testing.assert_allclose(R.sum(axis=1), 1.0, atol=1e-12)


@given(problems())
def test_gamma_bounds(problem):
    X, C, w, sigma = problem
    W = len(X) if w is None else w.sum()
    J = naive.inertia(X, C, w)
    slack = 1e-9 * (abs(J) + sigma * W + 1)
    assert abs(fk.objective(X, C, 0.0, sample_weight=w) - J) <= slack
    for assignment in ("softmax", "entmax15"):
        F = fk.objective(X, C, sigma, assignment, sample_weight=w)
        H = naive.h_max(assignment, len(C))
        assert J - sigma * H * W - slack <= F <= J + slack


@given(problems(max_n=15, max_d=3, max_k=4))
def test_gradient_matches_finite_differences(problem):
    X, C, w, sigma = problem
    assume(sigma > 0)
    for assignment in ("softmax", "entmax15"):
        G = fk.gradient(X, C, sigma, assignment, sample_weight=w)
        h = 1e-6 * max(1.0, np.abs(C).max())
        fd = np.zeros_like(C)
        for idx in np.ndindex(*C.shape):
            E = np.zeros_like(C)
            E[idx] = h
            up = fk.objective(X, C + E, sigma, assignment, sample_weight=w)
            down = fk.objective(X, C - E, sigma, assignment, sample_weight=w)
            fd[idx] = (up - down) / (2 * h)
        # The objective is C^1 with a Lipschitz gradient of about 2 N_k
        # (plus curvature ~ |x|^2 / sigma), so central differences are accurate
        # to O(h^2 * curvature) plus rounding of the objective.
        W = len(X) if w is None else w.sum()
        scale = np.abs(fk.objective(X, C, 0.0, sample_weight=w)) + W * (1 + 400 / sigma)
        # The objective itself is rounded to a few ulp of its size, which
        # includes sigma * W * H (large at high temperature); over 2h that is
        # the differences' rounding error.
        size = np.abs(fk.objective(X, C, sigma, assignment, sample_weight=w)) + sigma * W
        rounding = 8 * np.finfo(np.float64).eps * size / h
        atol = 1e-6 * scale + 1e-4 * np.abs(G).max() + rounding
        np.testing.assert_allclose(G, fd, rtol=0, atol=atol)


@given(problems())
def test_hard_step_is_one_lloyd_iteration(problem):
    X, C, w, _ = problem
    # Where two centers are (numerically) tied for a point, floating point
    # decides its cell, as it does for every K-Means implementation; ask for a
    # margin so that the Voronoi partition is well defined.
    D = np.sort(naive.sqdist(X, C), axis=1)
    if len(C) > 1:
        assume((D[:, 1] - D[:, 0] > 1e-9 * (1 + D[:, 1])).all())
    expected = naive.lloyd(X, C, w)
    np.testing.assert_allclose(fk.step(X, C, 1.0, "hard", sample_weight=w), expected, atol=1e-9)
    np.testing.assert_allclose(fk.step(X, C, 0.0, "softmax", sample_weight=w), expected, atol=1e-9)
