"""The spare-center state machine (fastrbfkm._spares.Spares) on tiny examples:
parking, splitting, closing, merging, and the picklable estimator that holds one."""

import pickle

import numpy as np

from fastrbfkm import MiniBatchRBFKMeans
from fastrbfkm._spares import Candidates, Spares
from fastrbfkm.datasets import make_blobs


def test_exact_copies_are_spares_of_the_first_of_their_group():
    C = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 0.0], [0.0, 2.0], [1.0, 0.0]])
    spares = Spares.of_copies(C)
    assert spares.active.tolist() == [True, True, False, False, False]
    assert spares.parent.tolist() == [0, 1, 0, 1, 0]
    assert spares.n_active == 2 and not spares.all_active and spares.pairs.shape == (0, 2)
    assert Spares.none(3).all_active and Spares.none(3).parent.tolist() == [0, 1, 2]
    assert repr(spares) == "Spares(2 of 5 active, 0 fresh pairs)"


def test_parking_moves_the_spares_of_the_spare_too():
    spares = Spares(np.array([True, True, False, False]), np.array([0, 1, 1, 0]))
    spares.park(1, 0)  # 1 and the spare parked on it (2) now wait on 0
    assert spares.active.tolist() == [True, False, False, False]
    assert spares.parent.tolist() == [0, 0, 0, 0]
    C = np.array([[1.0, 1.0], [5.0, 5.0], [7.0, 7.0], [9.0, 9.0]])
    spares.sync(C)
    np.testing.assert_array_equal(C, np.ones((4, 2)))


def test_a_split_nudges_a_spare_off_each_unstable_candidate():
    C = np.array([[0.0, 0.0], [3.0, 3.0], [0.0, 0.0], [3.0, 3.0]])
    spares = Spares.of_copies(C)  # 0 and 1 active, 2 on 0, 3 on 1
    found = Candidates.of(
        index=np.array([1, 0]),
        critical=np.array([4.0, 1.0]),  # only center 1 is unstable at 2
        spread=np.array([4.0, 9.0]),
        gain=np.array([8.0, 3.0]),
        axes=np.array([[1.0, 0.0], [0.0, 1.0]]),
    )
    pairs = spares.split_unstable(C, found, 2.0, np.random.default_rng(0), 0.1)
    assert pairs.tolist() == [[1, 2]]  # the first spare goes to the first candidate
    np.testing.assert_array_equal(spares.pairs, pairs)
    assert spares.active.tolist() == [True, True, True, False] and spares.parent[2] == 2
    # +-0.1 * sqrt(4) along the axis, about where center 1 was
    np.testing.assert_allclose(sorted([C[1, 0], C[2, 0]]), [2.8, 3.2])
    np.testing.assert_array_equal(C[1:3, 1], [3.0, 3.0])
    np.testing.assert_array_equal(C[3], C[1])  # the spare left follows its leader
    assert spares.fresh_rows().tolist() == [[1, 2]]  # rows of C[active]


def test_splits_go_to_the_unstable_candidates_that_gain_most_first():
    # four active centers, four spares; all four candidates unstable at 1
    C = np.repeat(np.arange(4.0)[:, None] * 10, 2, axis=0).repeat(2, axis=1)
    spares = Spares.of_copies(C)
    found = Candidates.of(
        index=np.array([2, 0, 6, 4]),
        critical=np.array([5.0, 0.5, 5.0, 5.0]),  # center 0 is stable at 1
        spread=np.ones(4),
        gain=np.array([10.0, 9.0, 7.5, 6.0]),
        axes=np.tile([1.0, 0.0], (4, 1)),
    )
    # of the unstable ones (2, 6, 4), those within 0.7 of the best gain (10)
    assert found.splitting(1.0, gain_ratio=0.7).tolist() == [True, False, True, False]
    assert found.splitting(1.0, gain_ratio=0.0).tolist() == [True, False, True, True]
    assert found.unstable(1.0).tolist() == [True, False, True, True]
    pairs = spares.split_unstable(C, found, 1.0, np.random.default_rng(0), 0.1, gain_ratio=0.7)
    assert pairs[:, 0].tolist() == [2, 6]
    assert spares.n_active == 6
    # nothing unstable: nothing splits, whatever the ratio
    assert not found.splitting(100.0, gain_ratio=0.7).any()


def test_a_split_that_closed_returns_its_spare_and_the_temperature_forgets_its_pairs():
    C = np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0], [5.0, 5.0]])
    spares = Spares(np.array([True, True, True, False]), np.array([0, 1, 2, 2]))
    spares.pairs = np.array([[0, 1]])
    assert spares.close(C, np.array([True])).tolist() == [1]
    assert spares.active.tolist() == [True, False, True, False] and spares.parent[1] == 0
    np.testing.assert_array_equal(C[0], [0.5, 0.0])  # the middle of the pair
    assert spares.settle(C, 0.1).size == 0 and spares.pairs.shape == (0, 2)
    np.testing.assert_array_equal(C[1], C[0])


def test_centers_within_the_radius_merge_into_the_earlier_one():
    C = np.array([[0.0, 0.0], [0.05, 0.0], [3.0, 0.0], [0.0, 0.04], [0.0, 0.0]])
    spares = Spares(np.array([True, True, True, True, False]), np.array([0, 1, 2, 3, 1]))
    merged = spares.merge_copies(C, 0.1)
    assert merged.tolist() == [1, 3]
    assert spares.active.tolist() == [True, False, True, False, False]
    assert spares.parent.tolist() == [0, 0, 2, 0, 0]  # 4 waited on 1: now on 0
    np.testing.assert_array_equal(C[1], [0.05, 0.0])  # merge_copies does not move them
    spares.pairs = np.array([[2, 1]])
    assert spares.settle(C, 0.1).size == 0 and not spares.pairs.size  # settle does
    np.testing.assert_array_equal(C[[1, 3, 4]], np.zeros((3, 2)))


def stream(model, X, batches, start=0):
    rng = np.random.default_rng(0)
    chosen = [rng.integers(0, len(X), 300) for _ in range(batches)]
    for rows in chosen[start:]:
        model.partial_fit(X[rows])
    return model


def test_a_pickled_minibatch_model_goes_on_annealing_where_it_stopped():
    X, _ = make_blobs(3000, centers=5, random_state=0)
    whole = stream(MiniBatchRBFKMeans(6, anneal_batches=2, random_state=0), X, 60)
    half = stream(MiniBatchRBFKMeans(6, anneal_batches=2, random_state=0), X, 3)
    assert half._annealing and not half._spares.all_active  # stopped mid-annealing
    again = stream(pickle.loads(pickle.dumps(half)), X, 60, start=3)
    np.testing.assert_array_equal(again.cluster_centers_, whole.cluster_centers_)
    # a model pickled before the spares were one object loads as well
    state = half.__getstate__()
    spares = state.pop("_spares")
    state.update(_active=spares.active, _parent=spares.parent, _pairs=spares.pairs)
    old = MiniBatchRBFKMeans.__new__(MiniBatchRBFKMeans)
    old.__setstate__(pickle.loads(pickle.dumps(state)))
    assert "_active" not in vars(old)
    np.testing.assert_array_equal(old._spares.parent, spares.parent)
    again = stream(old, X, 60, start=3)
    np.testing.assert_array_equal(again.cluster_centers_, whole.cluster_centers_)
