"""anneal(): the path it records, its fixed points and the Gamma bounds."""

import numpy as np
import pytest

import fastrbfkm as fk
from fastrbfkm.datasets import make_blobs

from . import naive


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_anneal_records_converged_fixed_points_within_the_bounds(assignment):
    X, _ = make_blobs(400, centers=3, random_state=0)
    w = np.random.default_rng(0).uniform(0.5, 1.5, size=len(X))
    sigma_c = fk.critical_temperature(X, 3, assignment, sample_weight=w)
    sigmas = sigma_c * 1.2 * 0.7 ** np.arange(25)
    C0 = np.repeat(np.average(X, axis=0, weights=w)[None], 3, axis=0)
    path = fk.anneal(X, C0, sigmas, assignment, sample_weight=w, random_state=0)
    assert len(path) == 25 and path.centers.shape == (25, 3, 2)
    np.testing.assert_array_equal(path.sigmas, sigmas)
    # Next to a phase transition convergence slows down critically and may
    # need more than max_iter steps; everywhere else the tolerance is met.
    assert path.converged.sum() >= len(path) - 2
    scale = np.sqrt(np.trace(np.cov(X.T)))
    H = naive.h_max(assignment, 3)
    for t in range(len(path)):
        C, sigma = path.centers[t], path.sigmas[t]
        # The values are those of the k recorded centers, spares included.
        np.testing.assert_allclose(
            path.objective[t], fk.objective(X, C, sigma, assignment, sample_weight=w), rtol=1e-12
        )
        if path.converged[t]:  # the distinct centers are a fixed point
            A = np.unique(C, axis=0)
            assert len(A) == path.n_active[t]
            moved = fk.step(X, A, sigma, assignment, sample_weight=w)
            assert np.abs(moved - A).max() <= 1e-9 * scale
        J = naive.inertia(X, C, w)
        np.testing.assert_allclose(path.inertia[t], J, rtol=1e-12)
        assert J - sigma * H * w.sum() - 1e-9 * J <= path.objective[t] <= J * (1 + 1e-12)
    # Above the critical temperature everything sits on the mean; well below
    # it the three blobs have their own centers.
    assert path.n_active[0] == 1 and path.n_active[-1] == 3
    assert path.support_mean[0] >= path.support_mean[-1]


def test_anneal_validates_its_arguments():
    X, _ = make_blobs(50, centers=2, random_state=1)
    C0 = X[:2]
    with pytest.raises(ValueError, match="sigmas must be positive and strictly decreasing"):
        fk.anneal(X, C0, [1.0, 2.0])
    with pytest.raises(ValueError, match="sigmas must be positive"):
        fk.anneal(X, C0, [1.0, 0.0])
    with pytest.raises(ValueError, match="assignment must be 'softmax' or 'entmax15'"):
        fk.anneal(X, C0, [1.0], assignment="hard")
    with pytest.raises(ValueError, match="max_iter"):
        fk.anneal(X, C0, [1.0], max_iter=0)
    with pytest.raises(ValueError, match="tol"):
        fk.anneal(X, C0, [1.0], tol=-1.0)


def test_critical_temperature_formula():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(500, 3)) * [3.0, 1.0, 0.5]
    lam = np.linalg.eigvalsh(np.cov(X.T, bias=True))[-1]
    assert fk.critical_temperature(X, 5, "softmax") == pytest.approx(2 * lam)
    assert fk.critical_temperature(X, 5, "entmax15") == pytest.approx(2 * np.sqrt(5) * lam)


def test_a_cooling_too_close_to_one_is_refused_not_allocated():
    """A schedule of 10^13 temperatures (hundreds of TiB) is refused at once,
    naming cooling."""
    X, _ = make_blobs(200, n_features=2, centers=3, random_state=0)
    with pytest.raises(ValueError, match=r"cooling=0\.999999999999 would take"):
        fk.RBFKMeans(3, cooling=1 - 1e-12, random_state=0).fit(X)


def test_the_annealing_plan_holds_the_schedule_policy():
    from fastrbfkm.annealing import AnnealPlan

    auto = AnnealPlan.for_estimator("auto", None, 0.8, 10.0, np.float64, True, 3, 300)
    schedule = auto.schedule.temperatures()
    assert schedule[0] == 10.0 / 0.8 and schedule[-1] <= schedule[0] * np.finfo(np.float64).eps
    np.testing.assert_allclose(schedule[1:] / schedule[:-1], 0.8)
    assert auto.open_ended and auto.skip_idle and auto.max_iter == 3 and auto.tail_iter == 10
    fixed = AnnealPlan.for_estimator(2.0, None, 0.8, None, np.float32, True, 3, 300)
    assert list(fixed.schedule.temperatures()) == [2.0] and fixed.max_iter == 300
    assert not fixed.open_ended
    down = AnnealPlan.for_estimator(2.0, 0.5, 0.5, None, np.float64, False, 3, 300)
    assert list(down.schedule.temperatures()) == [2.0, 1.0, 0.5] and down.max_iter == 300
    assert AnnealPlan.for_estimator("auto", None, 0.8, 0.0, np.float64, True, 3, 300) is None
    batches = AnnealPlan.for_batches(4.0, 0.5, 1.0)
    assert batches.perturbation == 1.0 and not batches.skip_idle
    batches = batches.schedule
    assert batches.next(4.0) == 2.0 and not batches.ends_after(4.0)
    assert batches.ends_after(4.0 * np.finfo(np.float64).eps)
    assert batches.first_below(4.0, 1.5) == 1.0  # the first of 4, 2, 1, ... below 1.5
    given = AnnealPlan.given(np.array([3.0, 1.0]), 50, 1e-3, False)
    assert list(given.schedule.temperatures()) == [3.0, 1.0]
    assert given.max_iter == 50 and not given.skip_idle and not given.open_ended


def test_the_default_perturbation_is_the_tunable_one():
    """anneal() writes its default out (the docs show the number); it is the
    PERTURBATION that the estimator and the phase diagram use."""
    import inspect

    from fastrbfkm._tunables import PERTURBATION
    from fastrbfkm.annealing import AnnealPlan

    assert inspect.signature(fk.anneal).parameters["perturbation"].default == PERTURBATION
    assert AnnealPlan.for_diagram(1.0, 0.9, 10, 0.0).perturbation == PERTURBATION
    plan = AnnealPlan.for_estimator("auto", None, 0.8, 10.0, np.float64, True, 3, 300)
    assert plan.perturbation == PERTURBATION
