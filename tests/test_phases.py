"""The phase diagram: the number of clusters read off the annealing's splits.

Three well separated blobs give three clusters over the longest range of
temperatures, whatever the input kind; the split tree is a valid scipy
linkage whose leaves are the blobs; the critical temperatures predicted for
the splits that were bracketed (tried, closed, then opened one temperature
colder) lie in the bracket widened by 15%; ``RBFKMeans(n_clusters="auto")``
fits the count it reads off.
"""

import dask.array as da
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.cluster.hierarchy import dendrogram, is_valid_linkage
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

import fastrbfkm as fk
from fastrbfkm import PhaseDiagram, RBFKMeans, distinct_clusters, phase_diagram

from . import naive

MEANS = np.array([[0.0, 0.0, 0.0], [30.0, 0.0, 0.0], [0.0, 30.0, 5.0]])


def blobs(n_per=150, dtype=np.float64, seed=0, means=MEANS):
    rng = np.random.default_rng(seed)
    X = np.concatenate([m + rng.normal(size=(n_per, means.shape[1])) for m in means])
    return X.astype(dtype)


@pytest.fixture(scope="module")
def diagram():
    return phase_diagram(blobs(), max_clusters=7, random_state=0)


@pytest.mark.parametrize("seed", range(4))
def test_distinct_clusters_matches_the_naive_count(dtype, seed):
    rng = np.random.default_rng(seed)
    C = (rng.normal(size=(13, 3)) * 3).astype(dtype)
    C[5] = C[2]  # a duplicate counts once
    for sigma in [1e-12, 0.1, 1.0, 4.0, 30.0, 1e6]:
        assert distinct_clusters(C, sigma) == naive.distinct_clusters(C, sigma)
    assert distinct_clusters(C[:1], 1.0) == 1
    assert distinct_clusters(np.repeat(C[:1], 4, axis=0), 1e-9) == 1


@pytest.mark.parametrize(
    "C, sigma, error, name",
    [
        (np.ones(3), 1.0, ValueError, "C"),
        ([[np.nan, 1.0]], 1.0, ValueError, "C"),
        ([[0.0, 1.0]], -1.0, ValueError, "sigma"),
        ([[0.0, 1.0]], "1", TypeError, "sigma"),
    ],
)
def test_distinct_clusters_names_bad_arguments(C, sigma, error, name):
    with pytest.raises(error, match=name):
        distinct_clusters(C, sigma)


def test_three_blobs_give_three(diagram):
    assert isinstance(diagram, PhaseDiagram)
    assert diagram.n_clusters_ == 3
    assert diagram.persistence[3] == max(diagram.persistence.values())
    assert np.all(np.diff(diagram.sigmas) < 0)
    T = len(diagram)
    assert diagram.n_clusters.shape == diagram.n_active.shape == (T,)
    assert diagram.centers.shape == (T, 7, 3)
    assert np.all(diagram.n_clusters <= diagram.n_active)
    assert diagram.n_clusters[0] == 1 and diagram.n_clusters[-1] == 7
    assert np.all(np.isfinite(diagram.objective)) and np.all(diagram.inertia > 0)
    # the count is non-decreasing as the temperature falls, but for noise
    # near the end (a split can momentarily look like two clusters)
    assert np.all(np.diff(diagram.n_clusters[diagram.n_clusters <= 3]) >= 0)


def test_the_split_tree_is_a_linkage_over_the_blobs(diagram):
    L = diagram.linkage
    m = len(diagram.cluster_centers)
    assert m == 7 and L.shape == (m - 1, 4)
    assert is_valid_linkage(L)
    drawn = dendrogram(L, no_plot=True)
    assert sorted(drawn["leaves"]) == list(range(m))
    # Cut into three branches: every branch's leaves are near one blob's mean.
    groups = diagram.labels_of_centers(3)
    assert sorted(set(groups.tolist())) == [0, 1, 2]
    for g in range(3):
        leaves = diagram.cluster_centers[groups == g]
        nearest = np.argmin(naive.sqdist(leaves, MEANS), axis=1)
        assert len(set(nearest.tolist())) == 1
    # The two top splits are the blobs' and happen far above the others.
    top = np.sort(L[:, 2])[::-1]
    assert top[1] > 10 * top[2]


def test_splits_record_predicted_and_observed_critical_temperatures(diagram):
    assert len(diagram.splits) == 6  # seven centers: six splits lasted
    for s in diagram.splits:
        assert isinstance(s, fk.Split)
        assert s.sigma > 0 and s.predicted > 0
        if s.closed_at is None:
            assert s.observed == s.sigma
        else:
            assert s.closed_at > s.sigma
            assert s.sigma < s.observed < s.closed_at
            # the prediction, from the temperature before, within 15% of the bracket
            assert 0.85 * s.sigma <= s.predicted <= 1.15 * s.closed_at


@pytest.mark.parametrize("kind", ["float32", "csr", "memmap", "dask", "sample"])
def test_every_input_kind_gives_the_same_count(kind, tmp_path):
    X = blobs()
    anneal_size = "auto"
    if kind == "float32":
        X = X.astype(np.float32)
    elif kind == "csr":
        X = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))
    elif kind == "memmap":
        np.save(tmp_path / "X.npy", X)
        X = np.load(tmp_path / "X.npy", mmap_mode="r")
    elif kind == "dask":
        X = da.from_array(X, chunks=(100, 3))
    else:
        X, anneal_size = blobs(n_per=400), 600  # annealed on a sample of 600 rows
    found = phase_diagram(X, max_clusters=7, anneal_size=anneal_size, random_state=0)
    assert found.n_clusters_ == 3


def test_sample_weight_and_seeds():
    X = blobs()
    a = phase_diagram(X, 7, sample_weight=np.full(len(X), 2.0), random_state=1)
    b = phase_diagram(X, 7, random_state=1)
    np.testing.assert_allclose(a.sigmas, b.sigmas, rtol=1e-12)  # only the sums' order differs
    np.testing.assert_array_equal(a.n_clusters, b.n_clusters)
    c = phase_diagram(X, 7, random_state=1)
    np.testing.assert_array_equal(b.sigmas, c.sigmas)  # seeded: the same bits again
    # a blob weighted to nothing is not a cluster
    w = np.r_[np.ones(300), np.zeros(150)]
    assert phase_diagram(X, 7, sample_weight=w, random_state=1).n_clusters_ == 2
    assert phase_diagram(X, 7, assignment="entmax15", random_state=0).assignment == "entmax15"


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        (dict(max_clusters=1), ValueError, "max_clusters"),
        (dict(max_clusters=2.5), TypeError, "max_clusters"),
        (dict(max_clusters=10_000), ValueError, "max_clusters"),
        (dict(assignment="hard"), ValueError, "assignment"),
        (dict(assignment="nope"), ValueError, "assignment"),
        (dict(cooling=1.0), ValueError, "cooling"),
        (dict(max_iter=0), ValueError, "max_iter"),
        (dict(tol=-1.0), ValueError, "tol"),
        (dict(anneal_size=1), ValueError, "anneal_size"),
        (dict(anneal_size="all"), TypeError, "anneal_size"),
    ],
)
def test_bad_parameters_are_named(kwargs, error, name):
    with pytest.raises(error, match=name):
        phase_diagram(blobs(n_per=20), **{"max_clusters": 5, **kwargs})


def test_bad_data_is_refused():
    with pytest.raises(ValueError, match="no spread"):
        phase_diagram(np.ones((50, 2)), 4)
    X = blobs(n_per=20)
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        phase_diagram(X, 4)


def test_estimator_fits_the_count_it_reads_off():
    X = blobs()
    km = RBFKMeans("auto", max_clusters=7, random_state=0).fit(X)
    assert km.n_clusters_ == 3 == km.phase_diagram_.n_clusters_
    assert km.cluster_centers_.shape == (3, 3)
    assert sorted(np.argmin(naive.sqdist(km.cluster_centers_, MEANS), axis=0)) == [0, 1, 2]
    assert km.transform(X[:5]).shape == (5, 3)
    assert km.get_feature_names_out().tolist() == [f"rbfkmeans{i}" for i in range(3)]
    assert clone(km).get_params()["max_clusters"] == 7
    fixed = RBFKMeans(3, random_state=0).fit(X)
    assert fixed.n_clusters_ == 3 and fixed.phase_diagram_ is None


def test_estimator_auto_refuses_what_it_cannot_do():
    X = blobs(n_per=3)
    with pytest.raises(ValueError, match="max_clusters=10"):
        RBFKMeans("auto").fit(X)  # 9 rows, up to 10 clusters
    with pytest.raises(ValueError, match="n_clusters='auto'"):
        RBFKMeans("auto", max_clusters=4, init=X[:3]).fit(X)
    with pytest.raises(InvalidParameterError, match="max_clusters"):
        RBFKMeans("auto", max_clusters=1).fit(X)
    with pytest.raises(InvalidParameterError, match="n_clusters"):
        RBFKMeans("many").fit(X)


def test_the_plots_draw_the_counts_the_splits_and_the_tree(diagram):
    import matplotlib.pyplot as plt

    from fastrbfkm.plotting import plot_phase_diagram, plot_split_tree

    fig, (left, right) = plt.subplots(1, 2)
    ax = plot_phase_diagram(diagram, ax=left)
    assert ax is left and ax.get_xscale() == "log"
    steps = ax.lines[0]
    np.testing.assert_array_equal(steps.get_ydata(), diagram.n_clusters)
    dots = next(line for line in ax.lines if line.get_label() == "split (observed)")
    np.testing.assert_allclose(dots.get_xdata(), [s.observed for s in diagram.splits])
    np.testing.assert_array_equal(ax.right_ax.lines[0].get_ydata(), diagram.objective)
    assert plot_split_tree(diagram, ax=right) is right
    assert sorted(int(t.get_text()) for t in right.get_xticklabels()) == list(range(7))
    plt.close(fig)
    empty = PhaseDiagram(**{**diagram.__dict__, "linkage": np.empty((0, 4))})
    with pytest.raises(ValueError, match="single cluster"):
        plot_split_tree(empty)
    plt.close("all")
