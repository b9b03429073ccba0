"""Principal variances and axes without d x d matrices (wide data): the
Lanczos iterations on scatter products agree with the eigenpairs of the
formed matrices, and the moments of wide data keep only the variances."""

import numpy as np
import pytest

from fastrbfkm import _axes, _principal, _rows, _tunables
from fastrbfkm import _kernels as K
from fastrbfkm._axes import largest_variance, principal
from fastrbfkm._rows import InMemoryRows
from fastrbfkm._streaming import StreamedRows

from . import naive
from .helpers import make_problem


def anisotropic(n, d, k, dtype=np.float64, seed=0):
    """k blobs, each stretched along its own random axis (clear spectral gaps)."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=6.0, size=(k, d))
    labels = rng.integers(k, size=n)
    axes = rng.normal(size=(k, d))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    X = centers[labels] + rng.normal(size=(n, d)) * 0.3
    X += rng.normal(scale=2.0, size=(n, 1)) * axes[labels]
    w = rng.uniform(0.5, 2.0, size=n)
    C = (centers + rng.normal(scale=0.5, size=(k, d))).astype(dtype)
    return X.astype(dtype), C, w


def dense_reference(X, C, w, sigma, assignment):
    N, A = naive.center_scatter(X, C, sigma, assignment, range(len(C)), w)
    return (N, *_principal.dense_eigenpairs(N, A))


@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_lanczos_matches_the_dense_eigenpairs(assignment, dtype, monkeypatch):
    X, C, w = anisotropic(900, 40, 5, dtype)
    mode = {"hard": K.HARD, "softmax": K.SOFTMAX, "entmax15": K.ENTMAX15}[assignment]
    sigma = 0.0 if mode == K.HARD else 4.0
    monkeypatch.setattr(_rows, "DENSE_MAX", 8)  # d = 40 is "wide" here
    monkeypatch.setattr(_axes, "DENSE_MAX", 8)
    N, values, axes = principal(InMemoryRows(X, w), C, sigma, mode)
    N_ref, values_ref, axes_ref = dense_reference(X, C, w, sigma, assignment)
    np.testing.assert_allclose(N, N_ref, rtol=1e-10)
    np.testing.assert_allclose(values, values_ref, rtol=1e-7)
    np.testing.assert_allclose(np.abs((axes * axes_ref).sum(axis=1)), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(axes, axis=1), 1.0, rtol=1e-12)


def test_soft_scatter_and_hard_cells_in_the_same_passes(monkeypatch):
    X, C, w = anisotropic(700, 30, 4, seed=5)
    monkeypatch.setattr(_rows, "DENSE_MAX", 8)
    monkeypatch.setattr(_axes, "DENSE_MAX", 8)
    soft, cells = principal(InMemoryRows(X, w), C, 3.0, K.SOFTMAX, cells=True)
    for got, want in [
        (soft, dense_reference(X, C, w, 3.0, "softmax")),
        (cells, dense_reference(X, C, w, 0.0, "hard")),
    ]:
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-7)
        np.testing.assert_allclose(np.abs((got[2] * want[2]).sum(axis=1)), 1.0, atol=1e-6)


def test_lanczos_in_groups_and_on_a_streamed_source(monkeypatch, tmp_path):
    """Centers worked in several groups (a small basis budget), blocks
    streamed from a file, give the in-memory result."""
    X, C, w = anisotropic(500, 30, 6)
    monkeypatch.setattr(_rows, "DENSE_MAX", 8)
    monkeypatch.setattr(_axes, "DENSE_MAX", 8)
    want = principal(InMemoryRows(X, w), C, 2.0, K.ENTMAX15)
    monkeypatch.setattr(_principal, "BASIS_BUDGET", 2 * 25 * 30)  # two centers a group
    np.save(tmp_path / "X.npy", X)
    streamed = StreamedRows(np.load(tmp_path / "X.npy", mmap_mode="r"), w, block_rows=64)
    for got in (
        principal(InMemoryRows(X, w), C, 2.0, K.ENTMAX15),
        principal(streamed, C, 2.0, K.ENTMAX15),
    ):
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-9)
        np.testing.assert_allclose(np.abs((got[2] * want[2]).sum(axis=1)), 1.0, atol=1e-7)


def test_lanczos_edge_cases(monkeypatch):
    """A center without mass (zeros), a cell whose points all sit on its
    center (no spread), a cell of one point off its center (rank one)."""
    X = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [10.0, 1.0, 2.0, 2.0]])
    C = np.array([[0.0, 0.0, 0.0, 0.0], [11.0, 1.0, 2.0, 2.0], [-50.0, 0.0, 0.0, 0.0]])
    monkeypatch.setattr(_rows, "DENSE_MAX", 1)
    monkeypatch.setattr(_axes, "DENSE_MAX", 1)
    N, values, axes = principal(InMemoryRows(X, np.empty(0)), C, 0.0, K.HARD)
    np.testing.assert_array_equal(N, [2.0, 1.0, 0.0])
    np.testing.assert_allclose(values, [0.0, 1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(np.abs(axes[1]), [1.0, 0.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_array_equal(axes[2], 0.0)


def test_wide_moments_keep_only_the_variances():
    d = _tunables.DENSE_MAX + 1
    X, _, w = make_problem(300, d, 2, offset=30.0)
    moments = InMemoryRows(X, w).moments()
    assert moments.covariance is None
    np.testing.assert_allclose(moments.mean, np.average(X, axis=0, weights=w), rtol=1e-12)
    want = np.average((X - moments.mean) ** 2, axis=0, weights=w)
    np.testing.assert_allclose(moments.variance, want, rtol=1e-10)


def test_largest_variance_of_wide_data():
    d = _tunables.DENSE_MAX + 44
    X, _, w = anisotropic(400, d, 1, seed=3)
    rows = InMemoryRows(X, w)
    want = np.linalg.eigvalsh(np.cov(X.T, aweights=w, bias=True))[-1]
    assert largest_variance(rows, rows.moments()) == pytest.approx(want, rel=1e-8)
