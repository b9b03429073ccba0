"""The model registry (fastrbfkm._model): the one table of assignments and
metrics drives every list of choices, and a code it does not hold is
refused, never served another assignment's maths."""

import math

import numpy as np
import pytest
from sklearn.utils._param_validation import StrOptions

import fastrbfkm as fk
from fastrbfkm import _kernels as K
from fastrbfkm.__main__ import build_parser
from fastrbfkm._kernels.assignment import jacobian_weight, reach
from fastrbfkm._model import ASSIGNMENTS, METRICS, Metric, assignment_of, metric_of
from fastrbfkm.annealing import critical_from_variance, is_hard

#: A code no assignment has.
UNREGISTERED = 7


def test_the_registry_restates_the_kernel_codes():
    assert {name: a.code for name, a in ASSIGNMENTS.items()} == {
        "hard": K.HARD,
        "softmax": K.SOFTMAX,
        "entmax15": K.ENTMAX15,
    }
    assert len({a.code for a in ASSIGNMENTS.values()}) == len(ASSIGNMENTS)
    for a in ASSIGNMENTS.values():
        assert assignment_of(a.code) is a
        assert a.vjp() is (None if a.backward is None else getattr(K, a.backward))


def _options(constraints):
    (option,) = [c for c in constraints if isinstance(c, StrOptions)]
    return option.options


@pytest.mark.parametrize("estimator", [fk.RBFKMeans, fk.MiniBatchRBFKMeans])
def test_the_estimators_accept_exactly_the_registered_names(estimator):
    constraints = estimator._parameter_constraints
    assert _options(constraints["assignment"]) == set(ASSIGNMENTS)
    assert _options(constraints["metric"]) == set(METRICS)


def test_the_command_line_offers_exactly_the_registered_names():
    _, commands = build_parser()
    choices = {a.dest: a.choices for a in commands["fit"]._actions if a.choices}
    assert list(choices["assignment"]) == list(ASSIGNMENTS)
    assert list(choices["metric"]) == list(METRICS)


def test_the_checks_accept_exactly_the_registered_names():
    from fastrbfkm._validation import check_assignment, check_soft_assignment

    for name, a in ASSIGNMENTS.items():
        assert check_assignment(name) == a.code
        if a.soft:
            assert check_soft_assignment(name) == a.code
        else:
            with pytest.raises(ValueError, match="has no temperature"):
                check_soft_assignment(name)
    for name, m in METRICS.items():
        assert metric_of(name) is m
    with pytest.raises(ValueError, match="assignment must be one of"):
        check_assignment("sparsemax")
    with pytest.raises(ValueError, match="metric must be 'euclidean' or 'cosine'"):
        metric_of("manhattan")


def test_the_torch_layer_accepts_exactly_the_registered_names():
    torch = pytest.importorskip("torch")
    from fastrbfkm import torch as fkt

    X = torch.tensor(np.random.default_rng(0).normal(size=(20, 2)))
    C = X[:3].clone()
    for name in ASSIGNMENTS:
        R = fkt.responsibilities(X, C, 1.0, assignment=name)
        assert torch.allclose(R.sum(1), torch.ones(20, dtype=R.dtype))
        fkt.RBFKMeansLayer(3, 2, assignment=name)
    with pytest.raises(ValueError, match="assignment must be one of"):
        fkt.responsibilities(X, C, 1.0, assignment="sparsemax")
    # the torch forward has one branch per registered code, no catch-all
    with pytest.raises(ValueError, match="no assignment has kernel code 7"):
        fkt._torch_assign(torch.ones(4, 3, dtype=X.dtype), 1.0, UNREGISTERED, 1.0)
    with pytest.raises(ValueError, match="no assignment has kernel code 7"):
        fkt._torch_loss(X, C, None, 1.0, UNREGISTERED, 1.0)


def test_an_unregistered_code_is_refused():
    with pytest.raises(ValueError, match="no assignment has kernel code 7"):
        assignment_of(UNREGISTERED)
    with pytest.raises(ValueError, match="no assignment has kernel code"):
        assignment_of("softmax")
    with pytest.raises(ValueError, match="no assignment has kernel code 7"):
        critical_from_variance(1.0, 3, UNREGISTERED)
    with pytest.raises(ValueError, match="no assignment has kernel code 7"):
        is_hard(np.zeros(K.N_SUMMARY), UNREGISTERED)
    with pytest.raises(ValueError, match="hard has no temperature"):
        critical_from_variance(1.0, 3, K.HARD)


def test_the_kernels_give_an_unregistered_code_nan_not_another_assignment():
    """No catch-all branch: the kernels' dispatchers have one branch per
    registered code, and anything else is NaN."""
    X = np.random.default_rng(1).normal(size=(50, 2))
    C = X[:4].copy()
    R = K.responsibilities(X, C, 1.0, UNREGISTERED)
    assert np.isnan(R).all()
    assert math.isnan(jacobian_weight(UNREGISTERED, 0.25))
    assert reach(UNREGISTERED, 1.0) == (0.0, np.inf)  # nothing pruned: all to the dispatcher


def test_the_jacobian_weight_is_the_registered_form():
    forms = {"r": lambda r: r, "sqrt(r)": math.sqrt}
    for a in ASSIGNMENTS.values():
        for r in (0.0, 1.0) if a.name == "hard" else (0.0, 0.09, 0.5, 1.0):
            assert jacobian_weight(a.code, r) == forms[a.jacobian](r)


def test_the_critical_and_split_factors():
    k = 9
    assert critical_from_variance(0.5, k, K.SOFTMAX) == 1.0
    assert critical_from_variance(0.5, k, K.ENTMAX15) == 3.0
    assert ASSIGNMENTS["softmax"].split_factor == 1.0
    assert ASSIGNMENTS["entmax15"].split_factor == np.sqrt(2.0)


# The metric's projections: the input door reads every kind of input through
# the entry's function for it, and every center update projects through its
# ``centers``, so a new metric is an entry of METRICS and its functions.


class Calls:
    """The projections of a metric, recorded as they are called."""

    def __init__(self):
        self.log = []

    def __call__(self, name, function):
        def recorded(*args, **kwargs):
            self.log.append(name)
            return function(*args, **kwargs)

        return recorded

    def count(self, name):
        return self.log.count(name)


def doubled(X, *args):
    """The rows of a dense array, doubled (a copy)."""
    return np.asarray(X) * 2


def doubled_csr(X):
    return K.CSR(X.data * 2, X.indices, X.indptr, X.n_cols)


def doubled_block(Y, offset=0):
    Y *= 2
    return Y


@pytest.fixture
def probe(monkeypatch):
    """A third metric registered for the test only: the Euclidean one of the
    rows doubled (each kind of input through its own function), centers
    halved after every update, inertia reported as a quarter of D."""
    calls = Calls()
    euclidean = METRICS["euclidean"]
    entry = Metric(
        "probe",
        sphere=False,
        cuda=False,
        scaled=False,
        dense=calls("dense", doubled),
        csr=calls("csr", doubled_csr),
        dask=calls("dask", lambda X: X.map_blocks(doubled, dtype=X.dtype)),
        block=calls("block", doubled_block),
        centers=calls("centers", lambda C, old=None: C / 2),
        given=calls("given", lambda C: C),
        mean=calls("mean", lambda mean, covariance: mean / 2),
        inertia_scale=4.0,
        distances=euclidean.distances,
        tensor=euclidean.tensor,
    )
    monkeypatch.setitem(METRICS, "probe", entry)
    return entry, calls


def blobs(n=60, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def test_the_input_door_reads_dense_rows_through_the_metric(probe):
    from fastrbfkm._backend import open_rows

    entry, calls = probe
    X = blobs()
    rows = open_rows(X, metric="probe")
    assert rows.metric is entry and calls.log == ["dense"]
    np.testing.assert_array_equal(rows.X, 2 * X)
    with pytest.raises(ValueError, match="metric='probe' runs on the CPU only"):
        open_rows(X, backend="cuda", metric="probe")
    # the functional API opens X at the same door and projects C by `given`
    C = X[:4]
    got = fk.squared_distances(X, C, metric="probe")
    np.testing.assert_allclose(got, fk.squared_distances(2 * X, C), rtol=1e-12)
    assert calls.log == ["dense", "dense", "given"]


def test_the_input_door_reads_csr_rows_through_the_metric(probe):
    import scipy.sparse as sp

    from fastrbfkm._backend import open_rows

    entry, calls = probe
    X = sp.random(50, 6, density=0.5, format="csr", random_state=0) + sp.eye(50, 6, format="csr")
    rows = open_rows(X, metric="probe")
    assert rows.metric is entry and calls.log == ["csr"]
    np.testing.assert_array_equal(rows.X.data, 2 * X.tocsr().data)


def test_the_input_door_reads_dask_chunks_through_the_metric(probe):
    da = pytest.importorskip("dask.array")
    from fastrbfkm._backend import open_rows

    entry, calls = probe
    X = blobs(40)
    rows = open_rows(da.from_array(X, chunks=(10, 3)), metric="probe")
    assert rows.metric is entry and calls.log == ["dask"]
    assert rows.moments().mean == pytest.approx(2 * X.mean(axis=0), rel=1e-12)


def test_the_input_door_reads_streamed_blocks_through_the_metric(probe, tmp_path):
    from sklearn import config_context

    from fastrbfkm._backend import open_rows
    from fastrbfkm._streaming import StreamedRows

    entry, calls = probe
    X = blobs(500, 4)
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
    with config_context(working_memory=0.004):  # 4 KB: the file streams
        rows = open_rows(mapped, fit=True, metric="probe")
    assert isinstance(rows, StreamedRows) and rows.metric is entry
    blocks = list(rows.blocks())
    assert len(blocks) > 1 and calls.count("block") == len(blocks)
    np.testing.assert_array_equal(np.concatenate([b.copy() for _, b in rows.blocks()]), 2 * X)
    drawn, _ = rows.batch(5, np.random.default_rng(0))
    assert calls.log[-1] == "dense" and np.isin(drawn[:, 0], 2 * X[:, 0]).all()


def test_center_updates_project_through_the_metric(probe):
    from fastrbfkm._rows import in_memory
    from fastrbfkm.lloyd import run_lloyd

    entry, calls = probe
    X = blobs()
    rows = in_memory(X, np.empty(0), entry)
    assert rows.metric is entry and not rows.sphere
    run_lloyd(rows, X[:3].copy(), 5, 0.0)
    assert calls.count("centers") >= 2  # the start, and every update
    C = X[:3]
    calls.log.clear()
    new = fk.step(X, C, 0.5, metric="probe")
    # the rows doubled at the door, the updated centers halved after it
    want = fk.step(2 * X, C, 0.5) / 2
    np.testing.assert_allclose(new, want, rtol=1e-12)
    assert calls.log == ["dense", "given", "centers"]


@pytest.mark.parametrize("estimator", ["RBFKMeans", "MiniBatchRBFKMeans"])
def test_the_estimators_go_through_the_registered_entry(monkeypatch, estimator):
    """A fit with metric="cosine" reads rows, projects centers and reports
    inertia through METRICS["cosine"]: replaced by a recording copy, the
    fit is the same, its calls are seen, and a changed scale is reported."""
    import dataclasses

    calls = Calls()
    cosine = METRICS["cosine"]
    recording = dataclasses.replace(
        cosine,
        dense=calls("dense", cosine.dense),
        centers=calls("centers", cosine.centers),
        mean=calls("mean", cosine.mean),
    )
    X = blobs(300, 4)
    cls = getattr(fk, estimator)
    # annealed from the data's one center (the metric's mean)
    params = dict(n_clusters=4, random_state=0, max_iter=300, assignment="entmax15")
    if estimator == "RBFKMeans":
        params.update(n_init=1)
    ref = cls(**params, metric="cosine").fit(X)
    monkeypatch.setitem(METRICS, "cosine", recording)
    fit = cls(**params, metric="cosine").fit(X)
    np.testing.assert_array_equal(fit.cluster_centers_, ref.cluster_centers_)
    assert fit.inertia_ == ref.inertia_
    assert calls.count("dense") >= 1 and calls.count("centers") >= 1
    assert calls.count("mean") >= 1
    monkeypatch.setitem(METRICS, "cosine", dataclasses.replace(recording, inertia_scale=4.0))
    assert cls(**params, metric="cosine").fit(X).inertia_ == pytest.approx(ref.inertia_ / 2)
