"""The fit loop on the GPU: the device rows source against the in-memory one,
and RBFKMeans / anneal with ``backend="cuda"`` against the CPU fit.

Under numba's CUDA simulator (tests/conftest.py) the problems are tiny; on
a real GPU (``NUMBA_ENABLE_CUDASIM=0``) they are larger. float64 fits must
give the CPU's centers to 1e-10 and the same labels and iteration counts.
"""

from __future__ import annotations

import numpy as np
import pytest

from fastrbfkm import RBFKMeans, anneal
from fastrbfkm import _kernels as K
from fastrbfkm import cuda as fcuda
from fastrbfkm._rows import InMemoryRows
from fastrbfkm.datasets import make_blobs

from .helpers import make_problem, tolerance

ON_GPU = fcuda.is_available()
SIM = fcuda.simulator_enabled()
pytestmark = pytest.mark.skipif(
    not (ON_GPU or SIM),
    reason="neither a usable CUDA GPU nor the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)",
)
N = 50_000 if ON_GPU else 19

if ON_GPU or SIM:
    from numba import cuda

    from fastrbfkm.cuda.rows import DeviceRows


def pair(dtype=np.float64, n=N, d=3, k=5, seed=3):
    X, C, w = make_problem(n, d, k, dtype, seed=seed)
    return C, DeviceRows.from_input(X, w), InMemoryRows(X, w)


def assert_same(got, want, dtype=np.float64):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for a, b in zip(got, want, strict=True):
        scale = max(1.0, float(np.abs(b).max()))
        np.testing.assert_allclose(a, b, rtol=tolerance(dtype), atol=tolerance(dtype) * scale)


def test_moments_and_weight():
    _, gpu, cpu = pair()
    assert gpu.weight == pytest.approx(cpu.weight, rel=1e-14)
    assert (gpu.n, gpu.d, gpu.dtype) == (cpu.n, cpu.d, cpu.dtype)
    for weighted in (True, False):
        assert_same(gpu.moments(weighted), cpu.moments(weighted))


@pytest.mark.parametrize("mode", [K.HARD, K.SOFTMAX, K.ENTMAX15])
def test_stats_and_scatter(mode):
    C, gpu, cpu = pair()
    sigma = 0.0 if mode == K.HARD else 0.7
    assert_same(gpu.stats(C, sigma, mode), cpu.stats(C, sigma, mode))
    assert_same(gpu.scatter(C, sigma, mode), cpu.scatter(C, sigma, mode))


def test_removal_costs_assign_and_farthest():
    C, gpu, cpu = pair(seed=4)
    assert_same(gpu.cell_summary(C, False).costs, cpu.cell_summary(C, False).costs)
    k1 = C[:1]  # k = 1: zeros
    assert_same(gpu.cell_summary(k1, False).costs, cpu.cell_summary(k1, False).costs)
    labels, inertia, counts = gpu.assign(C)
    want = cpu.assign(C)
    assert labels.dtype == want[0].dtype == np.int32
    np.testing.assert_array_equal(labels, want[0])
    assert inertia == pytest.approx(want[1], rel=1e-12)
    np.testing.assert_array_equal(counts, want[2])
    far, want_far = gpu.farthest(C, 3), cpu.farthest(C, 3)
    for name in ("index", "labels", "rows", "weights"):
        np.testing.assert_array_equal(getattr(far, name), getattr(want_far, name))
    np.testing.assert_allclose(far.dist, want_far.dist, rtol=1e-12)


def test_farthest_ties_go_to_the_lowest_index():
    X = np.array([[0.0], [3.0], [-3.0], [1.0], [3.0], [-1.0]])
    w = np.arange(1.0, 7.0)
    far = DeviceRows.from_input(X, w).farthest(np.array([[0.0]]), 3)
    np.testing.assert_array_equal(far.index, [1, 2, 4])
    np.testing.assert_array_equal(far.weights, [2.0, 3.0, 5.0])


@pytest.mark.parametrize("init", ["k-means++", "random", "array"])
def test_initial_centers_draw_the_same_rows(init):
    C, gpu, cpu = pair(seed=5)
    init = C if init == "array" else init
    got = gpu.initial_centers(4 if init is not C else 5, init, np.random.default_rng(1))
    want = cpu.initial_centers(4 if init is not C else 5, init, np.random.default_rng(1))
    np.testing.assert_array_equal(got, want)


def test_sampled_kmeans_plusplus_draws_the_same_rows(monkeypatch):
    """With more rows than the seeding sample: greedy k-means++ on the same
    sample, the same k-means|| round, the same centers (a float64 problem
    in few features, whose distances both sides sum from differences)."""
    import fastrbfkm.seeding as seeding

    monkeypatch.setattr(seeding, "SEED_ROWS_PER_CENTER", 2)
    monkeypatch.setattr(seeding, "SEED_ROWS_MIN", 9)
    _, gpu, cpu = pair(seed=7)
    got = gpu.initial_centers(4, "k-means++", np.random.default_rng(3))
    want = cpu.initial_centers(4, "k-means++", np.random.default_rng(3))
    np.testing.assert_array_equal(got, want)


def test_float32_rows():
    C, gpu, cpu = pair(np.float32, seed=6)
    assert gpu.dtype == np.float32
    assert_same(gpu.stats(C, 0.7, K.ENTMAX15), cpu.stats(C, 0.7, K.ENTMAX15), np.float32)
    assert_same(gpu.moments(), cpu.moments(), np.float32)


# ------------------------------------------------------------------ fits


def blobs(n=N):
    X, _ = make_blobs(n, centers=3, random_state=0)
    return X.astype(np.float64)


@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_fit_on_the_gpu_equals_the_cpu_fit(assignment):
    X = blobs()
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(X))
    settings = dict(
        n_clusters=3,
        assignment=assignment,
        sigma="auto" if assignment == "hard" else 1.0,
        init=X[[0, 5, 9]].copy(),
        max_iter=20,
        refine=assignment == "entmax15",
        random_state=0,
    )
    gpu = RBFKMeans(backend="cuda", **settings).fit(X, sample_weight=w)
    cpu = RBFKMeans(backend="cpu", **settings).fit(X, sample_weight=w)
    np.testing.assert_allclose(gpu.cluster_centers_, cpu.cluster_centers_, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(gpu.labels_, cpu.labels_)
    assert gpu.inertia_ == pytest.approx(cpu.inertia_, rel=1e-10)
    assert gpu.n_iter_ == cpu.n_iter_
    assert gpu.cluster_centers_.dtype == X.dtype and isinstance(gpu.labels_, np.ndarray)


def test_kmeans_plusplus_fit_and_device_input():
    X = blobs()
    cpu = RBFKMeans(3, assignment="hard", backend="cpu", random_state=0).fit(X)
    gpu = RBFKMeans(3, assignment="hard", backend="cuda", random_state=0).fit(X)
    np.testing.assert_allclose(gpu.cluster_centers_, cpu.cluster_centers_, rtol=1e-10)
    # CUDA input: "auto" follows the data; predictions stay on the device.
    on_device = RBFKMeans(3, assignment="hard", random_state=0).fit(cuda.to_device(X))
    np.testing.assert_allclose(on_device.cluster_centers_, cpu.cluster_centers_, rtol=1e-10)
    assert on_device.n_features_in_ == X.shape[1]
    labels = on_device.predict(cuda.to_device(X))
    assert not isinstance(labels, np.ndarray)
    np.testing.assert_array_equal(labels.copy_to_host(), cpu.predict(X))
    np.testing.assert_allclose(
        on_device.transform(cuda.to_device(X)).copy_to_host(), cpu.transform(X), rtol=1e-10
    )
    assert on_device.score(X) == pytest.approx(cpu.score(X), rel=1e-12)  # host data, auto: CPU
    with pytest.raises(ValueError, match="X has 1 features"):
        on_device.predict(cuda.to_device(X[:, :1].copy()))
    with pytest.raises(ValueError, match="backend='cpu'"):
        RBFKMeans(3, backend="cpu").fit(cuda.to_device(X))


def test_backend_parameter():
    km = RBFKMeans(3, backend="cuda")
    assert km.get_params()["backend"] == "cuda"
    assert RBFKMeans(**km.get_params()).backend == "cuda"
    with pytest.raises(ValueError, match="'backend' parameter of RBFKMeans must be"):
        RBFKMeans(3, backend="gpu").fit(blobs(12))


def test_anneal_on_the_gpu_equals_the_cpu():
    X = blobs()
    C0 = np.repeat(X.mean(axis=0, keepdims=True), 3, axis=0)
    sigmas = [8.0, 1.0]
    gpu = anneal(X, C0, sigmas, "entmax15", max_iter=30, random_state=0, backend="cuda")
    cpu = anneal(X, C0, sigmas, "entmax15", max_iter=30, random_state=0, backend="cpu")
    np.testing.assert_allclose(gpu.centers, cpu.centers, rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(gpu.n_iter, cpu.n_iter)
    np.testing.assert_allclose(gpu.objective, cpu.objective, rtol=1e-10)
    with pytest.raises(ValueError, match="backend must be one of"):
        anneal(X, C0, sigmas, backend="gpu")
