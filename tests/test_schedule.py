"""The annealing schedules (fastrbfkm._schedule): the geometric one against
the formulas the callers used before it, a given one, and a new kind of
schedule that is one class."""

import math

import numpy as np
import pytest

from fastrbfkm._schedule import GeometricSchedule, GivenSchedule, Schedule


def old_geometric(start, stop, cooling):
    """The geometric schedule as annealing.geometric_schedule wrote it."""
    count = 1
    if stop < start:
        count = max(1, int(np.ceil(np.log(stop / start) / np.log(cooling))) + 1)
    return start * cooling ** np.arange(count)


def old_first_below(sigma, top, cooling):
    return sigma * cooling ** (math.floor(math.log(top / sigma) / math.log(cooling)) + 1)


@pytest.mark.parametrize(
    ("start", "cooling", "stop"),
    [(10.0, 0.8, 1e-3), (12.5, 0.9, 12.5), (3.0, 0.5, 7.0), (1.7, 0.95, 1.7 * 2.2e-16)],
)
def test_the_geometric_temperatures_are_the_old_formula_to_the_bit(start, cooling, stop):
    t = GeometricSchedule(start, cooling, stop).temperatures()
    assert t.tobytes() == old_geometric(start, stop, cooling).tobytes()
    assert t[-1] <= stop or len(t) == 1
    assert list(GeometricSchedule(start, cooling).temperatures()) == [start]  # no stop: one


def test_the_geometric_steps_are_the_old_formulas_to_the_bit():
    rng = np.random.default_rng(0)
    for _ in range(200):
        cooling = float(rng.uniform(0.05, 0.99))
        sigma = float(10 ** rng.uniform(-5, 5))
        top = sigma * float(rng.uniform(1e-4, 1.0))
        s = GeometricSchedule(sigma, cooling, sigma * 1e-6)
        assert s.next(sigma) == sigma * cooling
        below = s.first_below(sigma, top)
        assert below == old_first_below(sigma, top, cooling)
        assert below < top and below / cooling >= top * (1 - 1e-12)
        assert s.ends_after(sigma) == (sigma * cooling < sigma * 1e-6)
    # the torch layer's step keeps the factor's own type, as sigma * cooling does
    assert type(GeometricSchedule(1.0, np.float32(0.7)).next(1.0)) is np.float32
    assert not GeometricSchedule(1.0, 0.5).ends_after(1e-300)  # no stop: never ends


def test_a_geometric_schedule_refuses_bad_values_and_too_many_temperatures():
    with pytest.raises(ValueError, match="0 < cooling < 1"):
        GeometricSchedule(1.0, 1.5, 0.1).temperatures()
    with pytest.raises(ValueError, match=r"cooling=0\.999999 would take"):
        GeometricSchedule(1.0, 0.999999, 1e-12).temperatures()


def test_a_given_schedule_steps_through_its_temperatures():
    s = GivenSchedule(np.array([8.0, 5.0, 2.0, 1.5, 0.5]))
    assert list(s.temperatures()) == [8.0, 5.0, 2.0, 1.5, 0.5]
    assert s.next(8.0) == 5.0 and s.next(6.0) == 5.0
    assert not s.ends_after(1.5) and s.ends_after(0.5)
    assert s.first_below(5.0, 1.9) == 1.5 and s.first_below(5.0, 5.0) == 2.0
    assert s.first_below(5.0, 0.1) == 0.5  # none below: the last
    assert s.first_below(0.5, 0.2) == 0.5  # at the end: stays
    with pytest.raises(ValueError, match=r"no temperature below 0\.5"):
        s.next(0.5)


class HalvingThenLinear(Schedule):
    """A new kind of schedule, and all that it needs: its temperatures."""

    def __init__(self, start: float, halvings: int, steps: int):
        self.start, self.halvings, self.steps = start, halvings, steps

    def temperatures(self) -> np.ndarray:
        hot = self.start * 0.5 ** np.arange(self.halvings)
        return np.concatenate([hot, np.linspace(hot[-1], 0, self.steps + 1)[1:-1]])


def test_a_new_schedule_is_one_class():
    s = HalvingThenLinear(16.0, 3, 4)
    assert list(s.temperatures()) == [16.0, 8.0, 4.0, 3.0, 2.0, 1.0]
    assert s.next(8.0) == 4.0 and s.next(3.5) == 3.0
    assert s.first_below(8.0, 2.5) == 2.0 and s.ends_after(1.0) and not s.ends_after(2.0)


def test_the_annealing_runs_a_new_schedule_as_it_runs_a_given_one():
    """run_anneal takes the temperatures of any Schedule: the new class's
    path is that of anneal() given the same temperatures."""
    import fastrbfkm as fk
    from fastrbfkm._backend import open_rows
    from fastrbfkm._kernels import ENTMAX15
    from fastrbfkm.annealing import AnnealPlan, AnnealSettings, run_anneal
    from fastrbfkm.datasets import make_blobs

    X, _ = make_blobs(600, centers=3, random_state=0)
    C = np.repeat(X.mean(0)[None], 3, axis=0)
    schedule = HalvingThenLinear(2.0 * fk.critical_temperature(X, 3), 4, 6)
    rows = open_rows(X, None, "cpu", fit=True)
    scale2 = float(rows.moments().variance.sum()) / rows.d
    settings = AnnealSettings(AnnealPlan(schedule), 1e-20 * scale2, scale2)
    rng = np.random.default_rng(0)
    ours = run_anneal(rows, C, ENTMAX15, settings, rng)
    given = fk.anneal(X, C, schedule.temperatures(), random_state=0)
    np.testing.assert_array_equal(ours.sigmas, schedule.temperatures())
    np.testing.assert_array_equal(ours.centers, given.centers)


def test_the_minibatch_annealing_walks_a_new_schedule(monkeypatch):
    """MiniBatchRBFKMeans steps through whatever schedule its plan holds:
    every temperature it visits is one of the new class's, and it ends."""
    from fastrbfkm import MiniBatchRBFKMeans
    from fastrbfkm._tunables import SPLIT_STEP
    from fastrbfkm.annealing import AnnealPlan
    from fastrbfkm.datasets import make_blobs

    def plan(self):
        return AnnealPlan(HalvingThenLinear(self.sigma_critical_, 5, 8), perturbation=SPLIT_STEP)

    monkeypatch.setattr(MiniBatchRBFKMeans, "_plan", property(plan))
    X, _ = make_blobs(3000, centers=4, random_state=0)
    km = MiniBatchRBFKMeans(4, anneal_batches=2, random_state=0)
    rng = np.random.default_rng(0)
    visited = []
    for _ in range(80):
        km.partial_fit(X[rng.integers(0, len(X), 300)])
        visited.append(km.sigma_)
    temperatures = HalvingThenLinear(km.sigma_critical_, 5, 8).temperatures()
    assert km.sigma_ == 0.0  # the annealing ended
    assert set(visited) - {0.0} <= set(temperatures.tolist())
    assert len(set(visited) - {0.0}) > 3
