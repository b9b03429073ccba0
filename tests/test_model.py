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
from fastrbfkm._model import ASSIGNMENTS, METRICS, assignment_of
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
    from fastrbfkm._sphere import check_metric
    from fastrbfkm._validation import check_assignment, check_soft_assignment

    for name, a in ASSIGNMENTS.items():
        assert check_assignment(name) == a.code
        if a.soft:
            assert check_soft_assignment(name) == a.code
        else:
            with pytest.raises(ValueError, match="has no temperature"):
                check_soft_assignment(name)
    for name, m in METRICS.items():
        assert check_metric(name) is m.sphere
    with pytest.raises(ValueError, match="assignment must be one of"):
        check_assignment("sparsemax")
    with pytest.raises(ValueError, match="metric must be 'euclidean' or 'cosine'"):
        check_metric("manhattan")


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
