"""One set of names across the functional API, the estimators and the
PyTorch layer (docs/conventions.md, "Names and errors"), and the old
spellings, which keep working for one release with a FutureWarning."""

import dataclasses
import inspect
import warnings

import numpy as np
import pytest

import fastrbfkm as fk

X = np.random.default_rng(0).normal(size=(200, 3))
C = X[:4].copy()
W = np.random.default_rng(1).uniform(0.5, 2.0, len(X))
MEAN = np.repeat(X.mean(axis=0, keepdims=True), 3, axis=0)
SIGMAS = [2.0, 1.0, 0.5]

FUNCTIONS = [
    fk.squared_distances,
    fk.softmax,
    fk.entmax15,
    fk.responsibilities,
    fk.objective,
    fk.gradient,
    fk.step,
    fk.sufficient_statistics,
    fk.anneal,
    fk.critical_temperature,
    fk.kmeans_plusplus,
    fk.phase_diagram,
    fk.distinct_clusters,
]


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
def test_only_data_centers_temperature_and_assignment_are_positional(function):
    positional = [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.kind is p.POSITIONAL_OR_KEYWORD
    ]
    allowed = {
        "X",
        "Z",
        "R",
        "G",
        "C",
        "sigma",
        "sigmas",
        "assignment",
        "n_clusters",
        "max_clusters",
    }
    assert set(positional) <= allowed, positional


def test_the_same_parameter_has_the_same_name_everywhere():
    from fastrbfkm import MiniBatchRBFKMeans, RBFKMeans

    torch = pytest.importorskip("torch")  # noqa: F841
    from fastrbfkm.torch import RBFKMeansLayer

    for estimator in (RBFKMeans, MiniBatchRBFKMeans):
        names = set(inspect.signature(estimator).parameters)
        assert {"cooling", "init", "random_state", "backend", "assignment", "sigma"} <= names
    assert "cooling" in inspect.signature(RBFKMeansLayer.anneal).parameters
    assert "init" in inspect.signature(RBFKMeansLayer.init_from).parameters
    assert list(inspect.signature(fk.anneal).parameters)[:2] == ["X", "C"]


def test_positional_keywords_warn_and_give_the_same_result():
    want = fk.objective(X, C, 1.0, "softmax", sample_weight=W)
    with pytest.warns(FutureWarning, match="pass sample_weight by keyword"):
        got = fk.objective(X, C, 1.0, "softmax", W)
    assert got == want
    with pytest.warns(FutureWarning, match="lr"):
        stepped = fk.step(X, C, 1.0, "softmax", None, 1e-3)
    np.testing.assert_array_equal(stepped, fk.step(X, C, 1.0, "softmax", lr=1e-3))
    with pytest.raises(TypeError, match="multiple values"):
        fk.objective(X, C, 1.0, "softmax", W, sample_weight=W)
    with pytest.raises(TypeError, match="at most"):
        fk.squared_distances(X, C, "cpu", "extra")


def test_anneal_takes_its_old_names_with_a_warning():
    want = fk.anneal(X, MEAN, SIGMAS, random_state=0)
    with pytest.warns(FutureWarning, match="'C0' is now called 'C'"):
        got = fk.anneal(X, C0=MEAN, sigmas=SIGMAS, random_state=0)
    np.testing.assert_array_equal(got.centers, want.centers)
    with pytest.raises(TypeError, match="both"):
        fk.anneal(X, C=MEAN, C0=MEAN, sigmas=SIGMAS, random_state=0)


def test_anneal_default_seed_is_still_zero_and_says_it_will_change():
    with pytest.warns(FutureWarning, match="random_state changes from 0 to None"):
        path = fk.anneal(X, MEAN, SIGMAS)
    np.testing.assert_array_equal(path.centers, fk.anneal(X, MEAN, SIGMAS, random_state=0).centers)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fk.anneal(X, MEAN, SIGMAS, random_state=None)  # the new default: no warning


def test_the_warnings_point_at_the_caller():
    with pytest.warns(FutureWarning) as record:
        fk.objective(X, C, 1.0, "softmax", W)
    assert record[0].filename == __file__


def test_the_layer_takes_its_old_names_with_a_warning():
    torch = pytest.importorskip("torch")
    from fastrbfkm.torch import RBFKMeansLayer

    Z = torch.tensor(X, dtype=torch.float32)
    new = RBFKMeansLayer(4, 3, sigma=2.0).init_from(Z, init="k-means++", random_state=0)
    with pytest.warns(FutureWarning, match="'method' is now called 'init'"):
        old = RBFKMeansLayer(4, 3, sigma=2.0).init_from(Z, method="k-means++", random_state=0)
    assert torch.equal(old.centers, new.centers)
    with pytest.warns(FutureWarning, match="pass random_state by keyword") as record:
        again = RBFKMeansLayer(4, 3, sigma=2.0).init_from(Z, "k-means++", 0)
    assert torch.equal(again.centers, new.centers) and record[0].filename == __file__
    with pytest.warns(FutureWarning, match="'factor' is now called 'cooling'"):
        assert old.anneal(factor=0.5) == new.anneal(cooling=0.5) == 1.0
    with pytest.warns(FutureWarning, match="sample_weight"):
        from fastrbfkm.torch import rbf_kmeans_loss

        rbf_kmeans_loss(Z, new.centers, 1.0, "softmax", torch.ones(len(Z)))


@pytest.mark.parametrize(
    "call",
    [
        lambda: fk.objective(X, C, "hot"),
        lambda: fk.kmeans_plusplus(X, 2.5),
        lambda: fk.RBFKMeans(2.5).fit(X),
    ],
    ids=["sigma", "n_clusters", "estimator n_clusters"],
)
def test_a_value_of_the_wrong_type_is_a_type_error(call):
    with pytest.raises(TypeError):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: fk.objective(X, C, -1.0),
        lambda: fk.objective(X, C, 1.0, "sparsemax"),
        lambda: fk.kmeans_plusplus(X, 0),
        lambda: fk.RBFKMeans(0).fit(X),
        lambda: fk.objective(X, C, 1.0, backend="gpu"),
    ],
    ids=["sigma", "assignment", "n_clusters", "estimator n_clusters", "backend"],
)
def test_a_value_out_of_range_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("function", ["rbf_kmeans_loss", "responsibilities"])
def test_the_layers_old_backend_names_warn_and_give_the_same_result(function):
    """``backend="numba"`` and ``"torch"`` (before 0.2) raised a ValueError."""
    torch = pytest.importorskip("torch")
    import fastrbfkm.torch as ft

    call = getattr(ft, function)
    Z = torch.tensor(X, requires_grad=True)
    Ct = torch.tensor(C)
    want = call(Z, Ct, 1.0, "softmax", backend="cpu")
    with pytest.warns(FutureWarning, match="backend='numba' is now backend='cpu'") as record:
        got = call(Z, Ct, 1.0, "softmax", backend="numba")
    assert record[0].filename == __file__
    assert torch.equal(got, want)
    with pytest.warns(FutureWarning, match="backend='torch' is deprecated") as record:
        ops = call(Z, Ct, 1.0, "softmax", backend="torch")
    assert record[0].filename == __file__
    # torch ops on CPU tensors, as the old name ran them: differentiable twice
    assert ops.grad_fn is not None and "Backward" in type(ops.grad_fn).__name__
    torch.testing.assert_close(ops, want, rtol=1e-12, atol=1e-12)
    (grad,) = torch.autograd.grad(ops.sum() if ops.ndim else ops, Z, create_graph=True)
    assert grad.requires_grad
    with pytest.raises(ValueError, match="backend"):
        call(Z, Ct, 1.0, "softmax", backend="gpu")


def test_the_version_is_one_and_the_removals_come_in_the_next_release():
    """``__version__`` is the one source (pyproject.toml reads it) and the old
    spellings' release of removal is the one after it."""
    import re
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    from fastrbfkm import _deprecation

    project = tomllib.loads(
        (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    )
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fastrbfkm.__version__"}
    major, minor = (int(p) for p in re.match(r"(\d+)\.(\d+)\.", fk.__version__).groups())
    assert _deprecation.REMOVED_IN == f"{major}.{minor + 1}"
    assert _deprecation.removal_release("0.2.1") == "0.3"
    with pytest.warns(FutureWarning, match=f"stops working in {_deprecation.REMOVED_IN}"):
        fk.anneal(X, C0=MEAN, sigmas=SIGMAS, random_state=0)


def test_phase_diagram_takes_sample_size_as_the_old_name_of_anneal_size():
    """``anneal_size`` is ``RBFKMeans``'s name for the rows annealed; the
    phase diagram called it ``sample_size`` before 0.2."""
    want = fk.phase_diagram(X, 4, anneal_size=150, random_state=0)
    with pytest.warns(FutureWarning, match="'sample_size' is now called 'anneal_size'") as record:
        got = fk.phase_diagram(X, 4, sample_size=150, random_state=0)
    assert record[0].filename == __file__
    np.testing.assert_array_equal(got.sigmas, want.sigmas)
    np.testing.assert_array_equal(got.centers, want.centers)
    with pytest.raises(TypeError, match="both"):
        fk.phase_diagram(X, 4, sample_size=150, anneal_size=150)


def test_the_phase_diagrams_free_energy_is_its_objective():
    """``PhaseDiagram.objective``, as ``AnnealPath.objective`` and
    ``fastrbfkm.objective``; ``free_energy`` before 0.2."""
    diagram = fk.phase_diagram(X, 4, anneal_size=150, random_state=0)
    with pytest.warns(FutureWarning, match="free_energy is now called PhaseDiagram.objective"):
        old = diagram.free_energy
    assert old is diagram.objective
    assert "free_energy" not in {f.name for f in dataclasses.fields(fk.PhaseDiagram)}
