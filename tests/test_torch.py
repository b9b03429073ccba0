"""The PyTorch layer: gradients, numba and torch paths, and a training step."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fastrbfkm as fk  # noqa: E402
from fastrbfkm import torch as fkt  # noqa: E402

from . import naive  # noqa: E402

#: Far above the slowest honest run (a first run compiles the kernels; CI may be loaded).
TIMEOUT = 3600

SOFT = ["softmax", "entmax15"]


def problem(n=30, d=3, k=4, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=dtype)
    C = X[:k].clone() + 0.3 * torch.randn(k, d, generator=g, dtype=dtype)
    return X.requires_grad_(), C.requires_grad_()


@pytest.mark.parametrize("assignment", SOFT)
def test_gradcheck_loss(assignment):
    X, C = problem()
    w = torch.rand(X.shape[0], dtype=torch.float64) + 0.5
    for weights in (None, w):
        assert torch.autograd.gradcheck(
            lambda X, C, weights=weights: fkt.rbf_kmeans_loss(
                X, C, 0.7, assignment, sample_weight=weights
            ),
            (X, C),
            eps=1e-6,
            atol=1e-6,
        )


@pytest.mark.parametrize("assignment", SOFT)
def test_gradcheck_responsibilities(assignment):
    X, C = problem()
    assert torch.autograd.gradcheck(
        lambda X, C: fkt.responsibilities(X, C, 1.5, assignment), (X, C), eps=1e-6, atol=1e-6
    )


@pytest.mark.parametrize("assignment", ["hard", *SOFT])
@pytest.mark.parametrize(("dtype", "tol"), [(torch.float32, 1e-6), (torch.float64, 1e-12)])
def test_numba_and_torch_paths_agree(assignment, dtype, tol):
    X, C = problem(n=200, d=5, k=7, dtype=dtype, seed=1)
    w = torch.rand(200, dtype=dtype) + 0.5
    outs = {}
    for torch_ops in (False, True):  # the numba kernels, the GPU path's torch ops
        Xb, Cb = X.detach().clone().requires_grad_(), C.detach().clone().requires_grad_()
        loss = fkt._loss(Xb, Cb, 0.9, assignment, w, torch_ops)
        loss.backward()
        R = fkt._responsibilities(Xb.detach(), Cb.detach(), 0.9, assignment, torch_ops)
        outs[torch_ops] = (loss.detach(), Xb.grad, Cb.grad, R)
    for a, b in zip(outs[False], outs[True], strict=True):
        assert a.dtype == dtype
        scale = max(1.0, float(b.abs().max()))
        torch.testing.assert_close(
            a, b, rtol=0, atol=tol * scale * (10 if dtype == torch.float32 else 1)
        )


def test_loss_and_gradient_match_the_functional_api():
    X, C = problem(n=100, k=5, seed=2)
    for assignment in SOFT:
        loss = fkt.rbf_kmeans_loss(X, C, 0.5, assignment)
        Xn, Cn = X.detach().numpy(), C.detach().numpy()
        assert loss.item() == pytest.approx(fk.objective(Xn, Cn, 0.5, assignment) / 100, rel=1e-12)
        (gC,) = torch.autograd.grad(loss, C)
        np.testing.assert_allclose(
            gC.numpy(), fk.gradient(Xn, Cn, 0.5, assignment) / 100, rtol=1e-10, atol=1e-12
        )


def test_torch_entmax15_matches_the_reference_and_the_entmax_package():
    g = torch.Generator().manual_seed(3)
    Z = 3 * torch.randn(50, 12, generator=g, dtype=torch.float64)
    R = fkt.torch_entmax15(Z)
    np.testing.assert_allclose(R.numpy(), naive.entmax15(Z.numpy()), atol=1e-12)
    try:
        from entmax import entmax15
    except ImportError:
        return  # the entmax package is optional; the naive reference covers the maths
    np.testing.assert_allclose(R.numpy(), entmax15(Z, dim=-1).numpy(), atol=1e-10)


def test_sgd_with_the_lloyd_rate_is_the_soft_lloyd_step():
    X, _ = problem(n=300, d=2, k=3, seed=4)
    X = X.detach()
    layer = fkt.RBFKMeansLayer(3, 2, sigma=0.4, assignment="entmax15").double()
    layer.init_from(X, random_state=0)
    C0 = layer.centers.detach().numpy().copy()
    N, _, _ = fk.sufficient_statistics(X.numpy(), C0, 0.4, "entmax15")
    # loss = F / n, so eta_k = 1 / (2 N_k) on F is n / (2 N_k) on the loss:
    # plain SGD at lr = 1 on the gradient scaled per center by that rate.
    opt = torch.optim.SGD([layer.centers], lr=1.0)
    opt.zero_grad()
    layer.loss(X).backward()
    with torch.no_grad():
        rates = torch.tensor(300 / (2 * N), dtype=torch.float64)[:, None]
        layer.centers.grad.mul_(rates)
    opt.step()
    np.testing.assert_allclose(
        layer.centers.detach().numpy(), fk.step(X.numpy(), C0, 0.4, "entmax15"), atol=1e-12
    )


def test_layer_forward_anneal_and_validation():
    layer = fkt.RBFKMeansLayer(4, 3, sigma=2.0)
    X = torch.randn(50, 3)
    layer.init_from(X, init="fit", random_state=0)
    R = layer(X)
    assert R.shape == (50, 4) and torch.allclose(R.sum(1), torch.ones(50))
    assert layer.anneal(0.5) == 1.0 and layer.sigma == 1.0
    assert "n_clusters=4" in repr(layer)
    with pytest.raises(ValueError, match="cooling"):
        layer.anneal(1.5)
    with pytest.raises(ValueError, match="sigma"):
        fkt.rbf_kmeans_loss(X, layer.centers, -1.0)
    with pytest.raises(ValueError, match="columns"):
        fkt.rbf_kmeans_loss(X, torch.randn(4, 2), 1.0)
    with pytest.raises(ValueError, match="NaN"):
        fkt.responsibilities(torch.full((2, 3), float("nan")), layer.centers, 1.0)
    with pytest.raises(ValueError, match="assignment"):
        fkt.RBFKMeansLayer(2, 2, assignment="transform")
    with pytest.raises(ValueError, match="sample_weight"):
        fkt.rbf_kmeans_loss(X, layer.centers, 1.0, sample_weight=-torch.ones(50))
    # sigma as a 0-d tensor
    assert torch.isclose(
        fkt.rbf_kmeans_loss(X, layer.centers, torch.tensor(1.0)),
        fkt.rbf_kmeans_loss(X, layer.centers, 1.0),
    )


def test_deep_clustering_example_runs(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).parents[1] / "examples" / "plot_deep_clustering.py"
    out = subprocess.run(
        [sys.executable, str(script), "--seeds", "1", "--epochs", "2"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert out.returncode == 0, out.stderr
    assert "| joint (AE + rbf_kmeans_loss) |" in out.stdout


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_float64_data_through_a_float32_layer(assignment):
    """The layer's centers are float32 (torch's default) and the data float64:
    the forward pass measures both in X's dtype, and the backward pass of the
    responsibilities failed in a matrix product of the two dtypes."""
    X = torch.randn(50, 3, dtype=torch.float64, requires_grad=True)
    layer = fkt.RBFKMeansLayer(4, 3, sigma=0.7, assignment=assignment)
    layer.init_from(X.detach())
    (layer.loss(X) + layer(X)[:, 0].sum()).backward()
    assert X.grad.dtype == torch.float64 and layer.centers.grad.dtype == torch.float32
    twin = fkt.RBFKMeansLayer(4, 3, sigma=0.7, assignment=assignment).double()
    with torch.no_grad():
        twin.centers.copy_(layer.centers)
    X2 = X.detach().clone().requires_grad_()
    (twin.loss(X2) + twin(X2)[:, 0].sum()).backward()
    torch.testing.assert_close(X.grad, X2.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(layer.centers.grad, twin.centers.grad.float(), rtol=1e-5, atol=1e-5)


def test_tensors_that_require_grad_are_named_by_the_numpy_api():
    X = torch.randn(30, 2, requires_grad=True)
    with pytest.raises(TypeError, match=r"X is a torch tensor that requires grad; pass X\.detach"):
        fk.RBFKMeans(2, random_state=0).fit(X)
    with pytest.raises(TypeError, match="X is a torch tensor that requires grad"):
        fk.responsibilities(X, X.detach()[:2].numpy(), 1.0)
    with pytest.raises(TypeError, match="C is a torch tensor that requires grad"):
        fk.objective(X.detach().numpy(), X[:2], 1.0)
    # detached, they are data like any other
    assert fk.RBFKMeans(2, random_state=0).fit(X.detach()).cluster_centers_.shape == (2, 2)


def test_layer_anneal_refuses_to_reach_zero():
    layer = fkt.RBFKMeansLayer(3, 2, sigma=1e-300)
    with pytest.raises(ValueError, match="would take sigma from 1e-300 to 0"):
        layer.anneal(1e-100)
    assert layer.sigma == 1e-300


@pytest.mark.parametrize("torch_ops", [False, True])
def test_overflowing_magnitudes_are_refused_as_by_the_numpy_api(torch_ops):
    """Coordinates whose squared distances overflow the dtype gave 0 or NaN."""
    C = torch.zeros(3, 2)
    for X in (torch.full((10, 2), 1e30), torch.full((10, 2), -1e30)):
        with pytest.raises(ValueError, match="X has values up to 1e\\+30"):
            fkt._loss(X, C, 1.0, "entmax15", None, torch_ops)
        with pytest.raises(ValueError, match="X has values up to 1e\\+30"):
            fkt._responsibilities(X, C, 1.0, "entmax15", torch_ops)
    with pytest.raises(ValueError, match="C has values up to"):
        fkt._loss(torch.zeros(4, 2), torch.full((3, 2), 1e30), 1.0, "entmax15", None, torch_ops)


def test_backend_names_are_the_library_s():
    """The layer said "numba"/"torch" where the estimator and the functional
    API say "cpu"/"cuda": one set of names, checked against the tensors."""
    X, C = problem()
    want = fkt.rbf_kmeans_loss(X, C, 0.5).detach()
    assert float(fkt.rbf_kmeans_loss(X, C, 0.5, backend="cpu").detach()) == float(want)
    with pytest.raises(ValueError, match="'auto', 'cpu' or 'cuda'"):
        fkt.rbf_kmeans_loss(X, C, 0.5, backend="gpu")
    # the old names still work, with a FutureWarning (tests/test_names.py)
    with pytest.warns(FutureWarning, match="backend='numba' is now backend='cpu'"):
        assert float(fkt.rbf_kmeans_loss(X, C, 0.5, backend="numba").detach()) == float(want)
    with pytest.raises(ValueError, match="backend='cuda' needs CUDA tensors; got cpu"):
        fkt.responsibilities(X, C, 0.5, backend="cuda")
    with pytest.raises(TypeError, match="backend must be a string"):
        fkt.rbf_kmeans_loss(X, C, 0.5, backend=None)


@pytest.mark.parametrize("torch_ops", [False, True])
@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_sigma_zero_is_the_hard_limit_as_in_the_numpy_api(assignment, torch_ops):
    """The torch layer refused sigma = 0, which the numpy API takes as the
    hard limit for every assignment: the loss is the mean inertia, the
    responsibilities one-hot, and the centers' gradient 2 N_k (c_k - m_k) / n."""
    X, C = problem()
    loss = fkt._loss(X, C, 0.0, assignment, None, torch_ops)
    Xn, Cn = X.detach().numpy(), C.detach().numpy()
    assert float(loss) == pytest.approx(fk.objective(Xn, Cn, 0.0) / len(Xn), rel=1e-12)
    (grad_C,) = torch.autograd.grad(loss, C)
    N, S, _ = fk.sufficient_statistics(Xn, Cn, 0.0)
    want = 2.0 * (N[:, None] * Cn - S) / len(Xn)
    np.testing.assert_allclose(grad_C.numpy(), want, rtol=1e-10, atol=1e-12)
    R = fkt._responsibilities(X, C, 0.0, assignment, torch_ops)
    np.testing.assert_array_equal(R.detach().numpy(), fk.responsibilities(Xn, Cn, 0.0, "hard"))
    layer = fkt.RBFKMeansLayer(4, 3, sigma=0.0, assignment=assignment)
    assert layer.anneal(0.5) == 0.0


def test_layer_and_functions_name_bad_arguments():
    """``RBFKMeansLayer(0, 3)`` was accepted, ``(-1, 3)`` raised torch's
    negative-dimension error, a string input an AttributeError, and a
    one-element vector sigma passed where the numpy API refuses it."""
    for bad, error in ((0, ValueError), (-1, ValueError), (2.5, TypeError), (True, TypeError)):
        with pytest.raises(error, match="n_clusters must be a positive integer"):
            fkt.RBFKMeansLayer(bad, 3)
        with pytest.raises(error, match="n_features must be a positive integer"):
            fkt.RBFKMeansLayer(3, bad)
    assert fkt.RBFKMeansLayer(np.int64(2), 3).centers.shape == (2, 3)
    C = torch.randn(2, 3)
    with pytest.raises(TypeError, match=r"X must be a torch\.Tensor; got str"):
        fkt.responsibilities("data", C, 1.0)
    with pytest.raises(TypeError, match=r"X must be a torch\.Tensor"):
        fkt.rbf_kmeans_loss([[1.0, 2.0, 3.0]], C, 1.0)
    X = torch.randn(5, 3)
    with pytest.raises(ValueError, match="sigma must be a real number or a 0-d tensor"):
        fkt.responsibilities(X, C, torch.tensor([1.0]))
    with pytest.raises(ValueError, match="sigma must be a real number or a 0-d tensor"):
        fkt.responsibilities(X, C, np.array([1.0]))
    with pytest.raises(TypeError, match="sigma must be a real number"):  # as the numpy API
        fk.responsibilities(X.numpy(), C.numpy(), np.array([1.0]))
    with pytest.raises(TypeError, match="sigma must be a real number"):
        fkt.responsibilities(X, C, torch.tensor(True))
    same = fkt.responsibilities(X, C, np.float64(1.0))
    torch.testing.assert_close(same, fkt.responsibilities(X, C, np.array(1.0)))


def test_a_sigma_that_requires_grad_is_named_by_the_numpy_api():
    X = np.random.default_rng(0).normal(size=(10, 2))
    sigma = torch.tensor(1.0, requires_grad=True)
    with pytest.raises(TypeError, match="sigma is a torch tensor that requires grad"):
        fk.responsibilities(X, X[:2], sigma)
    np.testing.assert_array_equal(
        fk.responsibilities(X, X[:2], sigma.detach()), fk.responsibilities(X, X[:2], 1.0)
    )


#: Temperatures around and below the smallest normal float32 and float64,
#: down to the smallest subnormal float64.
TINY_SIGMAS = [1e-30, 1e-36, 1e-40, 1e-46, 1e-300, 2.3e-308, 1e-308, 1e-310, 1e-320, 5e-324]


@pytest.mark.parametrize("torch_ops", [False, True], ids=["numba", "torch-ops"])
@pytest.mark.parametrize("assignment", SOFT)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tiny_temperatures_give_the_hard_limit_with_finite_gradients(torch_ops, assignment, dtype):
    """Below sigma ~ 1.1e-308 (float32: 5.9e-39) every gradient of the
    responsibilities was NaN on the numba path (2 / sigma overflowed, times
    zeros); the torch-ops path, which CUDA tensors take, gave a NaN softmax
    and loss from 2.3e-308 (float32: from far above) and entmax15 raised
    'index -1 is out of bounds'. Now both give the hard limit: one-hot
    responsibilities with zero gradient, and the loss and gradients of
    sigma = 0."""
    g = torch.Generator().manual_seed(0)
    X0 = torch.randn(64, 3, generator=g, dtype=dtype)
    C0 = X0[:4].clone()
    X, C = X0.clone().requires_grad_(), C0.clone().requires_grad_()
    hard_R = fkt._responsibilities(X, C, 0.0, assignment, torch_ops)
    hard = fkt._loss(X, C, 0.0, assignment, None, torch_ops)
    hard.backward()
    hard_grads = (X.grad, C.grad)
    weights = torch.arange(4, dtype=dtype)
    for sigma in TINY_SIGMAS:
        X, C = X0.clone().requires_grad_(), C0.clone().requires_grad_()
        R = fkt._responsibilities(X, C, sigma, assignment, torch_ops)
        (R * weights).sum().backward()
        assert torch.equal(R, hard_R), sigma
        assert torch.equal(X.grad, torch.zeros_like(X)), sigma
        assert torch.equal(C.grad, torch.zeros_like(C)), sigma
        X.grad = C.grad = None
        loss = fkt._loss(X, C, sigma, assignment, None, torch_ops)
        loss.backward()
        torch.testing.assert_close(loss, hard.detach(), msg=f"sigma={sigma}")
        torch.testing.assert_close((X.grad, C.grad), hard_grads, msg=f"sigma={sigma}")


@pytest.mark.parametrize("torch_ops", [False, True], ids=["numba", "torch-ops"])
@pytest.mark.parametrize("assignment", SOFT)
def test_a_gradient_beyond_the_float_range_is_a_value_error_naming_sigma(torch_ops, assignment):
    """At a tie (here two coinciding centers) the responsibilities' gradient
    is of order 1 / sigma: past float64's range at sigma = 1e-310, it is a
    ValueError that names sigma, not NaN. The loss's gradient there is
    finite (the tied centers share it)."""
    X = torch.randn(64, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    C = torch.cat([X[:3], X[:1]]).requires_grad_()
    X.requires_grad_()
    R = fkt._responsibilities(X, C, 1e-310, assignment, torch_ops)
    with pytest.raises(ValueError, match=r"sigma=1e-310 is too small for the gradient"):
        (R * torch.arange(4.0, dtype=torch.float64)).sum().backward()
    X.grad = C.grad = None
    fkt._loss(X, C, 1e-310, assignment, None, torch_ops).backward()
    assert bool(torch.isfinite(X.grad).all() and torch.isfinite(C.grad).all())
    torch.testing.assert_close(C.grad[0], C.grad[3])


@pytest.mark.parametrize("assignment", SOFT)
def test_the_layer_anneals_to_the_smallest_subnormal_and_still_trains(assignment):
    """anneal(0.5) took the layer to 8.7e-311, where backward gave NaN in
    every entry of centers.grad. It now goes down to the smallest subnormal
    float64, where forward and backward are the hard limit's, and refuses
    the next step (to 0) with a ValueError."""
    X = torch.randn(64, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    layer = fkt.RBFKMeansLayer(4, 3, sigma=1.0, assignment=assignment).double()
    with torch.no_grad():
        layer.centers.copy_(X[:4])
    with pytest.raises(ValueError, match="underflow"):
        for _ in range(2000):
            layer.anneal(0.5)
    assert layer.sigma == 5e-324
    R = layer(X)
    (R * torch.arange(4.0, dtype=torch.float64)).sum().backward()
    assert torch.equal(layer.centers.grad, torch.zeros_like(layer.centers))
    layer.centers.grad = None
    loss = layer.loss(X)
    loss.backward()
    assert bool(torch.isfinite(loss)) and bool(torch.isfinite(layer.centers.grad).all())
    torch.testing.assert_close(
        loss, fkt.rbf_kmeans_loss(X, layer.centers.detach(), 0.0, assignment)
    )
