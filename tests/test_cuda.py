"""The CUDA kernels against the CPU kernels (and tests/naive.py).

These run everywhere: under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``,
set by conftest.py unless the run sets it to 0) on tiny problems, and on a
real GPU (``NUMBA_ENABLE_CUDASIM=0``) on larger ones, with the same checks.

Tolerances: float64 agrees with the CPU to ``1e-10`` relative (the same
algorithms in float64; only summation orders differ). float32 agrees to
``2e-4`` relative (``helpers.tolerance``): distances are rounded to float32
before the assignment on both sides, and their cross terms are summed in a
different order, which moves a float32 distance by a few units in the last
place. Labels, supports and entmax15 thresholds on identical inputs are
compared exactly.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import fastrbfkm as fk
from fastrbfkm import _kernels as K
from fastrbfkm import cuda as fcuda
from fastrbfkm._backend import choose
from fastrbfkm._model import ASSIGNMENTS
from fastrbfkm._tunables import AUTO_MIN_WORK

from . import naive
from .helpers import make_problem, tolerance

#: Far above the slowest honest run (a first run compiles the kernels; CI may be loaded).
TIMEOUT = 3600

ON_GPU = fcuda.is_available()
SIM = fcuda.simulator_enabled()
pytestmark = pytest.mark.skipif(
    not (ON_GPU or SIM),
    reason="neither a usable CUDA GPU nor the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)",
)

if ON_GPU:
    from numba import cuda

    SHAPES = [(100_003, 17, 33), (4_097, 1, 1), (65_537, 3, 130)]
elif SIM:
    from numba import cuda

    SHAPES = [(17, 3, 5), (9, 1, 1), (11, 2, 7)]
else:
    SHAPES = []
SHAPE_IDS = [f"n{n}-d{d}-k{k}" for n, d, k in SHAPES]
MODES = {name: a.code for name, a in ASSIGNMENTS.items()}


def scale_of(X, C):
    """Size of the squared distances (sets the absolute tolerance)."""
    return float(((X.astype(np.float64) - C.mean(axis=0)) ** 2).sum(axis=1).max())


def assert_close(got, want, dtype, scale=1.0):
    rtol = tolerance(dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


def typical_sigma(X, C):
    return float(np.median(K.squared_distances(X[:1000], C))) / 4


@pytest.mark.skipif(not SIM, reason="checks the simulator's tiny geometry")
def test_small_problems_cross_every_boundary():
    """Under the simulator the tests' problems span several tiles, chunks,
    segments and reduction levels, thanks to its tiny geometry."""
    from fastrbfkm.cuda.config import SPAN, TILE, cdiv, chunk_rows, n_segments

    n, d, k = SHAPES[0]
    m = chunk_rows(n, k)
    assert n > TILE and n > m  # more than one tile and one chunk of rows
    assert n_segments(min(n, m), k * (d + 1)) > 1  # several segments per chunk
    assert cdiv(n, TILE) > SPAN  # a final reduction of two levels


# --------------------------------------------------------------- distances


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_squared_distances_match_cpu(shape, dtype):
    n, d, k = shape
    X, C, _ = make_problem(n, d, k, dtype, offset=5.0)
    got = fk.squared_distances(X, C, backend="cuda")
    assert isinstance(got, np.ndarray) and got.dtype == dtype and got.shape == (n, k)
    assert got.min() >= 0
    assert_close(got, fk.squared_distances(X, C, backend="cpu"), dtype, scale_of(X, C))


def test_squared_distances_match_naive():
    X = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0], [-2.0, 5.0], [7.0, -1.0]])
    C = np.array([[0.0, 0.0], [3.0, 4.0], [1.0, 1.0]])
    np.testing.assert_allclose(
        fk.squared_distances(X, C, backend="cuda"), naive.sqdist(X, C), rtol=1e-14, atol=1e-13
    )


# ------------------------------------------------------- hard assignment


@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_hard_assignment_and_inertia_match_cpu(shape, dtype):
    from fastrbfkm.cuda import passes

    n, d, k = shape
    X, C, w = make_problem(n, d, k, dtype, seed=1)
    labels, mind, inertia = passes.hard_assign(
        cuda.to_device(X), C, cuda.to_device(w), passes.Workspace()
    )
    want_labels, want_mind, want_inertia = K.hard_assign(X, C, w, True)
    # Each row's distances come from the same float64 formula around the
    # same shift; where the two nearest are closer than the rounding, the
    # label may differ (float32): then both must be (near) minimal.
    got_labels = labels.copy_to_host()
    D = naive.sqdist(X, C)
    rows = np.arange(n)
    assert_close(D[rows, got_labels], D.min(axis=1), dtype, scale_of(X, C))
    if dtype == np.float64:
        np.testing.assert_array_equal(got_labels, want_labels)
    assert_close(mind.copy_to_host(), want_mind, dtype, scale_of(X, C))
    assert_close(inertia, want_inertia, dtype)


def test_hard_ties_go_to_the_lowest_index():
    # Every row is at the same distance from the duplicated centers 1, 3, 4.
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [5.0, 5.0]] * 3)
    C = np.array([[50.0, 50.0], [0.5, 0.5], [40.0, 0.0], [0.5, 0.5], [0.5, 0.5]])
    R = fk.responsibilities(X, C, 0.0, "hard", backend="cuda")
    np.testing.assert_array_equal(R.argmax(axis=1), np.ones(len(X), dtype=int))
    np.testing.assert_array_equal(R, K.responsibilities(X, C, 0.0, K.HARD))
    N, S, F = fk.sufficient_statistics(X, C, 0.0, "hard", backend="cuda")
    np.testing.assert_array_equal(N, [0, len(X), 0, 0, 0])
    np.testing.assert_allclose(S[1], X.sum(axis=0), rtol=1e-14)
    assert F == pytest.approx(naive.objective(X, C, 0.0, "hard"), rel=1e-14)


# -------------------------------------------------------- responsibilities


@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
@pytest.mark.parametrize("shape", SHAPES[:2], ids=SHAPE_IDS[:2])
def test_responsibilities_match_cpu(shape, assignment, dtype):
    n, d, k = shape
    X, C, _ = make_problem(n, d, k, dtype, seed=2)
    sigma = typical_sigma(X, C)
    got = fk.responsibilities(X, C, sigma, assignment, backend="cuda")
    want = fk.responsibilities(X, C, sigma, assignment, backend="cpu")
    assert got.dtype == dtype
    assert_close(got, want, dtype)
    np.testing.assert_allclose(got.astype(np.float64).sum(axis=1), 1.0, rtol=tolerance(dtype))
    if dtype == np.float64:
        np.testing.assert_array_equal(got > 0, want > 0)  # the same supports


def test_an_unregistered_code_gives_nan_not_another_assignment():
    """The device kernels have one branch per registered code, no catch-all."""
    from fastrbfkm.cuda import passes

    X, C, _ = make_problem(*SHAPES[0], np.float64, seed=4)
    ws = passes.Workspace()
    R = passes.responsibilities(cuda.to_device(X), C, 1.0, 7, ws).copy_to_host()
    assert np.isnan(R).all()


@pytest.mark.parametrize("sigma", [0.0, 1e-300, 1e300])
def test_extreme_temperatures(sigma):
    X, C, _ = make_problem(*SHAPES[0][:2], 4, np.float64, seed=3)
    for assignment in ("softmax", "entmax15"):
        got = fk.responsibilities(X, C, sigma, assignment, backend="cuda")
        want = fk.responsibilities(X, C, sigma, assignment, backend="cpu")
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# ----------------------------------------------------- softmax / entmax15


def logits(n, k, spread, seed):
    """Logits whose rows have many entries within 2 of their maximum."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(scale=spread, size=(n, k))
    Z[0] = 0.0  # one row of exact ties
    Z[1, : k // 2] = 1.0  # ties at the top
    return Z


@pytest.mark.parametrize("k", [1, 5, 24, 25, 60])
def test_entmax15_exact_on_the_same_logits(k):
    n = 6 if SIM else 20_000
    Z = logits(n, k, spread=0.6, seed=k)
    got = fk.entmax15(Z, backend="cuda")
    want = fk.entmax15(Z, backend="cpu")
    np.testing.assert_array_equal(got > 0, want > 0)  # exactly the same supports
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got, naive.entmax15(Z), atol=1e-9)
    soft = fk.softmax(Z, backend="cuda")
    np.testing.assert_allclose(soft, fk.softmax(Z, backend="cpu"), rtol=1e-12, atol=1e-300)


def test_logits_keep_shape_and_dtype():
    z = np.array([3.0, 1.0, 0.2, -4.0], dtype=np.float32)
    for f in (fk.softmax, fk.entmax15):
        got = f(z, backend="cuda")
        assert got.shape == z.shape and got.dtype == np.float32
        np.testing.assert_allclose(got, f(z, backend="cpu"), rtol=1e-6)


def test_rank_threshold_equals_the_sorted_walk():
    """The exact fallback of the entmax15 threshold (used when the Newton
    search cannot certify) against the sorted walk, ties included."""
    from numba import float64

    from fastrbfkm.cuda import assignment as A

    @cuda.jit
    def thresholds(E, out):
        i = cuda.grid(1)
        if i < E.shape[0]:
            emin, _ = A.row_argmin(E, i, 1.0)
            buf = cuda.local.array(24, float64)
            m = 0
            for j in range(E.shape[1]):
                g = A.half_gap(float(E[i, j]), emin, 0.5)
                if g <= 1.0:
                    buf[m] = g
                    m += 1
            out[i, 0] = A.sorted_threshold(buf, m)
            out[i, 1] = A.rank_threshold(E, i, 1.0, emin, 0.5)
            tau, certified = A.newton_threshold(E, i, 1.0, emin, 0.5)
            out[i, 2] = tau if certified else np.nan

    rng = np.random.default_rng(5)
    E = np.round(rng.uniform(0.0, 1.2, size=(8, 20)), 2)  # g = E - min: ties and non-candidates
    E[0] = 0.3
    out = np.zeros((8, 3))
    thresholds[1, 8](E, out)
    np.testing.assert_allclose(out[:, 1], out[:, 0], rtol=0, atol=1e-14)
    certified = ~np.isnan(out[:, 2])
    np.testing.assert_allclose(out[certified, 2], out[certified, 0], rtol=0, atol=1e-14)


# ------------------------------------------------------ the fused step


@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_fused_statistics_match_cpu(shape, assignment, dtype):
    from fastrbfkm.cuda import passes

    n, d, k = shape
    X, C, w = make_problem(n, d, k, dtype, seed=4, offset=3.0)
    sigma = typical_sigma(X, C)
    mode = MODES[assignment]
    weights = w if dtype == np.float64 else np.empty(0)  # both kinds of weights
    N, S, summary = passes.block_stats(
        cuda.to_device(X), C, cuda.to_device(weights), sigma, mode, passes.Workspace()
    )
    want_N, want_S, want_summary = K.block_stats(X, C, weights, sigma, mode, True)
    total = float(weights.sum()) if weights.size else float(n)
    assert_close(N, want_N, dtype, total)
    assert_close(S, want_S, dtype, total * np.abs(X).max())
    assert_close(summary, want_summary, dtype, total * scale_of(X, C))
    if dtype == np.float64:
        assert summary[K.SUPPORT_MAX] == want_summary[K.SUPPORT_MAX]
        assert summary[K.SOFT] == pytest.approx(want_summary[K.SOFT], rel=1e-12)


@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_functional_statistics_and_objective(assignment):
    X, C, w = make_problem(*SHAPES[0], np.float64, seed=6)
    sigma = typical_sigma(X, C)
    got = fk.sufficient_statistics(X, C, sigma, assignment, sample_weight=w, backend="cuda")
    want = fk.sufficient_statistics(X, C, sigma, assignment, sample_weight=w, backend="cpu")
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    F = fk.objective(X, C, sigma, assignment, sample_weight=w, backend="cuda")
    assert F == pytest.approx(naive.objective(X, C, sigma, assignment, w), rel=1e-10)


def test_functional_step_and_gradient():
    X, C, w = make_problem(*SHAPES[0], np.float64, seed=6)
    sigma = typical_sigma(X, C)
    for f, kwargs in [(fk.gradient, {}), (fk.step, {}), (fk.step, {"lr": 0.01})]:
        got = f(X, C, sigma, "softmax", sample_weight=w, backend="cuda", **kwargs)
        want = f(X, C, sigma, "softmax", sample_weight=w, backend="cpu", **kwargs)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


# ------------------------------------------------------ device inputs


def test_device_inputs_give_device_outputs():
    X, C, w = make_problem(*SHAPES[0], np.float32, seed=7)
    Xd, wd = cuda.to_device(X), cuda.to_device(w.astype(np.float32))
    D = fk.squared_distances(Xd, C)  # backend="auto" follows the data
    assert not isinstance(D, np.ndarray)
    np.testing.assert_allclose(D.copy_to_host(), fk.squared_distances(X, C), rtol=2e-4, atol=1e-4)
    sigma = typical_sigma(X, C)
    R = fk.responsibilities(Xd, cuda.to_device(C), sigma, "entmax15")
    np.testing.assert_allclose(
        R.copy_to_host(), fk.responsibilities(X, C, sigma, "entmax15"), atol=2e-4
    )
    new = fk.step(Xd, C, sigma, "softmax", sample_weight=wd)
    assert not isinstance(new, np.ndarray)
    want = fk.step(X, C, sigma, "softmax", sample_weight=w)
    np.testing.assert_allclose(new.copy_to_host(), want, rtol=2e-4, atol=1e-5)
    Z = cuda.to_device(np.array([[1.0, 2.0, 3.5], [0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(
        fk.entmax15(Z).copy_to_host(), fk.entmax15(Z.copy_to_host()), rtol=1e-12
    )


def test_bad_device_input_is_refused_with_the_argument_named():
    X, C, _ = make_problem(*SHAPES[0][:2], 2, np.float64)
    bad = X.copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        fk.squared_distances(cuda.to_device(bad), C)
    with pytest.raises(TypeError, match="X is a CUDA array of dtype int64"):
        fk.squared_distances(cuda.to_device(X.astype(np.int64)), C)
    with pytest.raises(ValueError, match="X must be a 2-D array"):
        fk.squared_distances(cuda.to_device(X[0]), C)
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        fk.objective(cuda.to_device(X), C, 1.0, sample_weight=cuda.to_device(-np.ones(len(X))))
    with pytest.raises(ValueError, match="C must have as many columns"):
        fk.squared_distances(cuda.to_device(X), C[:, :1] if X.shape[1] > 1 else np.ones((2, 2)))
    with pytest.raises(ValueError, match="backend='cpu'"):
        fk.squared_distances(cuda.to_device(X), C, backend="cpu")


# ------------------------------------------------------ choosing the backend


def test_backend_is_validated():
    X, C, _ = make_problem(5, 2, 2)
    for f, args in [(fk.squared_distances, (X, C)), (fk.objective, (X, C, 1.0))]:
        with pytest.raises(ValueError, match="backend must be one of"):
            f(*args, backend="gpu")
    with pytest.raises(ValueError, match="backend must be one of"):
        fk.softmax(X, backend=None)


def test_auto_picks_the_cpu_without_a_gpu():
    X = np.ones((5, 2))
    assert choose("auto", X, work=AUTO_MIN_WORK - 1) == "cpu"
    assert choose("auto", X, work=None) == "cpu"
    assert choose("auto", X, work=AUTO_MIN_WORK) == ("cuda" if ON_GPU else "cpu")
    assert choose("auto", cuda.to_device(X), work=1) == "cuda"  # device data stays there


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=environment,
        timeout=TIMEOUT,
    )


def test_importing_fastrbfkm_does_not_import_numba_cuda():
    code = (
        "import sys, numpy as np, fastrbfkm as fk\n"
        "X = np.random.default_rng(0).normal(size=(50, 3))\n"
        "fk.objective(X, X[:4], 1.0)\n"
        "from fastrbfkm._backend import open_rows\n"
        "rows = open_rows(X, n_clusters=3, fit=True)  # the fit's choice of backend\n"
        "print(type(rows).__name__, 'numba.cuda' in sys.modules)\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "InMemoryRows False"


@pytest.mark.skipif(ON_GPU, reason="a GPU is present: backend='cuda' runs")
def test_backend_cuda_without_a_gpu_says_what_is_missing():
    code = (
        "import numpy as np, fastrbfkm as fk\n"
        "X = np.ones((4, 2))\n"
        "try:\n"
        "    fk.squared_distances(X, X[:2], backend='cuda')\n"
        "except RuntimeError as exc:\n"
        "    print(exc)\n"
        "print(fk.squared_distances(X, X[:2], backend='auto').shape)\n"
    )
    result = run_python(code, NUMBA_ENABLE_CUDASIM="0")
    assert result.returncode == 0, result.stderr
    first, second = result.stdout.strip().splitlines()
    assert first.startswith("backend='cuda' cannot run:")
    assert "backend='cpu'" in first
    assert second == "(4, 2)"
