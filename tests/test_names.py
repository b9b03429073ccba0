"""One set of names across the functional API, the estimators, the phase
diagram, the PyTorch layer and the command line (docs/conventions.md, "Names
and errors", whose table the drift tests below check against every entry
point's signature), and the old spellings, which keep working for one
release with a FutureWarning."""

import argparse
import dataclasses
import inspect
import re
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
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    from fastrbfkm import _deprecation, _version

    project = tomllib.loads(
        (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    )
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "fastrbfkm._version.VERSION"
    }
    assert fk.__version__ == _version.VERSION
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


# ---------------------------------------------------------------- drift
# One name per concept across every entry point: the table of
# docs/conventions.md ("Names and errors"), checked against the signatures
# of the functional API, the estimators, the phase diagram, the PyTorch layer
# and the command line's options (their names with dashes).


def entry_points() -> dict[str, dict[str, object]]:
    """Every public entry point, by name, with its parameters' defaults
    (``inspect.Parameter.empty`` for none): the package's functions, the
    estimators and their fitting methods, the datasets, the PyTorch layer
    (when torch is installed) and the command line's commands (as
    ``cli fit``, their options' names with underscores)."""
    from fastrbfkm import datasets
    from fastrbfkm.__main__ import RENAMED_DEFAULTS, build_parser
    from fastrbfkm.paper import Settings

    def parameters(function) -> dict[str, object]:
        return {
            p.name: p.default
            for p in inspect.signature(function).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        }

    found = {}
    for name in fk.__all__:
        thing = getattr(fk, name)
        if name.startswith("__") or name in ("AnnealPath", "PhaseDiagram", "Split"):
            continue  # records, not entry points
        found[name] = parameters(thing)
        for method in ("fit", "partial_fit", "predict", "predict_proba", "score"):
            if inspect.isclass(thing) and hasattr(thing, method):
                found[f"{name}.{method}"] = parameters(getattr(thing, method))
    for name in ("make_blobs", "make_moons", "make_spiral", "make_circles"):
        found[f"datasets.{name}"] = parameters(getattr(datasets, name))
    found["paper.Settings"] = parameters(Settings)
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        import fastrbfkm.torch as ft

        found["RBFKMeansLayer"] = parameters(ft.RBFKMeansLayer)
        for method in ("anneal", "init_from", "loss", "forward"):
            found[f"RBFKMeansLayer.{method}"] = parameters(getattr(ft.RBFKMeansLayer, method))
        for name in ("rbf_kmeans_loss", "responsibilities"):
            found[f"torch.{name}"] = parameters(getattr(ft, name))
    _, commands = build_parser()
    for command, parser in commands.items():
        options = {}
        for action in parser._actions:
            if not action.option_strings or action.dest == "help":
                continue
            if action.help == argparse.SUPPRESS:  # an old name, hidden from --help
                continue
            default = action.default
            if default == argparse.SUPPRESS:
                default = RENAMED_DEFAULTS[command][action.dest]
            options[action.dest] = default
            assert action.option_strings[0] == "--" + action.dest.replace("_", "-"), action
        found[f"cli {command}"] = options
    return found


#: The names the same things had, or could be given: no entry point may
#: take them (old spellings live on only as keywords that a wrapper of
#: ``fastrbfkm._deprecation`` maps to the name, outside any signature).
SYNONYMS = {
    "C0": "C",
    "centroids": "C",
    "k": "n_clusters",
    "n_centers": "n_clusters",
    "num_clusters": "n_clusters",
    "T": "sigma",
    "temperature": "sigma",
    "mode": "assignment",
    "transform": "assignment",
    "factor": "cooling",
    "method": "init",
    "sample_size": "anneal_size",
    "seed": "random_state",
    "rng": "random_state",
    "w": "sample_weight",
    "weights": "sample_weight",
    "device": "backend",
    "distance": "metric",
    "free_energy": "objective",
    "n": "n_samples",
    "d": "n_features",
}

#: Parameters spelled as a synonym that name something else.
OTHER_THINGS = {("datasets.make_circles", "factor")}  # scikit-learn's radius ratio

#: The concepts of the table: the name, the entry points that take it (the
#: exact set: a new entry point, or one that loses the name, fails until the
#: table and the docs say so), and its default with the exceptions the docs
#: give a reason for (``REQUIRED``: no default).
REQUIRED = inspect.Parameter.empty
FUNCTIONAL_XC = ["responsibilities", "objective", "gradient", "step", "sufficient_statistics"]
LAYER_FUNCTIONS = ["torch.rbf_kmeans_loss", "torch.responsibilities"]
CONCEPTS = {
    "n_clusters": (
        ["RBFKMeans", "MiniBatchRBFKMeans", "critical_temperature", "kmeans_plusplus",
         "RBFKMeansLayer", "cli fit", "cli demo", "paper.Settings"],
        8,
        {"critical_temperature": REQUIRED, "kmeans_plusplus": REQUIRED,
         "RBFKMeansLayer": REQUIRED, "cli fit": None,  # None: required on the command line
         "paper.Settings": 4},
    ),
    "max_clusters": (["RBFKMeans", "phase_diagram", "cli fit"], None, {"phase_diagram": 10}),
    "assignment": (
        [*FUNCTIONAL_XC, "anneal", "critical_temperature", "phase_diagram", "RBFKMeans",
         "MiniBatchRBFKMeans", "RBFKMeansLayer", *LAYER_FUNCTIONS, "cli fit"],
        "entmax15",
        {"phase_diagram": "softmax"},  # exact critical temperatures (the docs say why)
    ),
    "cooling": (
        ["RBFKMeans", "MiniBatchRBFKMeans", "phase_diagram", "RBFKMeansLayer.anneal"],
        0.8,
        {"phase_diagram": 0.9},  # the resolution of the observed critical temperatures
    ),
    "anneal_size": (["RBFKMeans", "phase_diagram"], "auto", {}),
    "train_size": (["RBFKMeans"], None, {}),
    "init": (["RBFKMeans", "MiniBatchRBFKMeans", "RBFKMeansLayer.init_from"], "k-means++", {}),
    "random_state": (
        ["RBFKMeans", "MiniBatchRBFKMeans", "anneal", "kmeans_plusplus", "phase_diagram",
         "RBFKMeansLayer.init_from", "cli fit", "cli demo", "datasets.make_blobs",
         "datasets.make_moons", "datasets.make_spiral", "datasets.make_circles",
         "paper.Settings"],
        None,
        # anneal: 0 until 0.3, with a warning; the command line and the paper: reproducible
        {"anneal": "warn", "cli fit": 0, "cli demo": 0, "paper.Settings": 0},
    ),
    "backend": (
        ["squared_distances", "softmax", "entmax15", *FUNCTIONAL_XC, "anneal", "RBFKMeans",
         "MiniBatchRBFKMeans", *LAYER_FUNCTIONS, "cli fit"],
        "auto",
        {},
    ),
    "metric": (
        ["squared_distances", *FUNCTIONAL_XC, "anneal", "critical_temperature", "RBFKMeans",
         "MiniBatchRBFKMeans", "RBFKMeansLayer", *LAYER_FUNCTIONS, "cli fit"],
        "euclidean",
        {},
    ),
    "sample_weight": (
        ["objective", "gradient", "step", "sufficient_statistics", "anneal",
         "critical_temperature", "kmeans_plusplus", "phase_diagram", "RBFKMeans.fit",
         "RBFKMeans.score", "MiniBatchRBFKMeans.fit", "MiniBatchRBFKMeans.partial_fit",
         "MiniBatchRBFKMeans.score", "RBFKMeansLayer.loss", "torch.rbf_kmeans_loss"],
        None,
        {},
    ),
    "verbose": (["RBFKMeans", "MiniBatchRBFKMeans", "cli fit"], 0, {"cli fit": None}),
}  # fmt: skip


@pytest.fixture(scope="module")
def entries():
    return entry_points()


def test_no_entry_point_takes_another_name_for_a_concept(entries):
    wrong = [
        f"{entry}({name}): say {SYNONYMS[name]}"
        for entry, names in entries.items()
        for name in names
        if name in SYNONYMS and (entry, name) not in OTHER_THINGS
    ]
    assert not wrong, wrong


@pytest.mark.parametrize("concept", sorted(CONCEPTS))
def test_a_concept_has_its_name_and_default_where_the_table_says(concept, entries):
    where, default, exceptions = CONCEPTS[concept]
    has = {entry for entry, names in entries.items() if concept in names}
    expected = {entry for entry in where if entry in entries}  # the layer's need torch
    assert has == expected, (
        f"{concept}: taken by {sorted(has - expected)} too, not by {sorted(expected - has)}: "
        "say so in docs/conventions.md and in CONCEPTS"
    )
    for entry in sorted(has):
        want = exceptions.get(entry, default)
        assert entries[entry][concept] == want, (entry, concept, entries[entry][concept], want)


def test_the_command_lines_options_are_the_estimators_parameters(entries):
    """``fit``'s options are ``RBFKMeans``'s names (with dashes), but those
    about files; ``demo``'s are ``make_blobs``'s."""
    files = {"header", "delimiter", "columns", "out", "labels", "labeled", "working_memory"}
    assert set(entries["cli fit"]) - files <= set(entries["RBFKMeans"])
    assert set(entries["cli demo"]) - {"quick"} <= set(entries["datasets.make_blobs"]) | {
        "n_clusters"  # make_blobs's centers: blobs and the centers fitted to them
    }


def test_the_old_options_are_the_deprecated_ones():
    from fastrbfkm.__main__ import OLD_OPTIONS, build_parser

    _, commands = build_parser()
    for command, parser in commands.items():
        hidden = {
            option
            for action in parser._actions
            if action.help == argparse.SUPPRESS
            for option in action.option_strings
        }
        assert hidden == set(OLD_OPTIONS.get(command, {})), command
        assert all(SYNONYMS[old.lstrip("-")] for old in hidden)


def test_the_docs_table_names_every_concept_and_old_name():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "conventions.md").read_text()
    table = text[text.index("## Names and errors") :]
    rows = {
        re.findall(r"`(\w+)`", line.split("|")[1])[0]: line
        for line in table.splitlines()
        if line.startswith("| `")
    }
    assert set(CONCEPTS) <= set(rows), sorted(set(CONCEPTS) - set(rows))
    for old, new in [("C0", "C"), ("factor", "cooling"), ("method", "init"),
                     ("sample_size", "anneal_size"), ("free_energy", "objective"),
                     ("--k", "n_clusters"), ("--seed", "random_state")]:  # fmt: skip
        assert f"`{old}`" in rows[new], (old, new)


def test_the_papers_settings_take_seed_as_the_old_name_of_random_state():
    from fastrbfkm.paper import Settings

    with pytest.warns(FutureWarning, match="'seed' is now called 'random_state'") as record:
        settings = Settings(seed=3)
    assert record[0].filename == __file__ and settings == Settings(random_state=3)
    with pytest.warns(FutureWarning, match="Settings.seed is now called Settings.random_state"):
        assert settings.seed == 3
