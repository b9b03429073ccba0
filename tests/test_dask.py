"""The Dask backend: fits, predictions and annealing on dask arrays equal the
numpy ones, on the threaded scheduler and on a local dask.distributed cluster
(two worker processes, started once for this module); k-means|| seeding;
a worker killed in the middle of a fit; bad input.

Tolerances: float64 results agree with the numpy path to 1e-9 (relative, on
the data's scale: the only difference is the order in which chunk partials
are summed). float32 centers agree to 1e-5 of the data's scale (a few float32
roundings of the same float64 sums). The same chunks give the same bits on
every scheduler, so threaded and distributed fits are compared exactly.
"""

import os
import signal
import subprocess
import sys
import threading

import dask
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster

import fastrbfkm
from fastrbfkm import RBFKMeans
from fastrbfkm._rows import InMemoryRows
from fastrbfkm.dask import DaskRows, check_array, make_rows
from fastrbfkm.datasets import make_blobs
from fastrbfkm.seeding import kmeans_parallel, seed_indices

K_CLUSTERS = 4
CHUNKS = (700, 300, 1, 999, 500, 500)  # uneven, one single-row chunk
N_ROWS = sum(CHUNKS)


@pytest.fixture(scope="module")
def client():
    with (
        LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
            worker_dashboard_address=None,
        ) as cluster,
        Client(cluster, set_as_default=False) as c,
    ):
        yield c


@pytest.fixture(params=["threads", "distributed"])
def scheduler(request):
    """Run the test body on the threaded scheduler or on the local cluster."""
    if request.param == "threads":
        with dask.config.set(scheduler="threads"):
            yield None
    else:
        c = request.getfixturevalue("client")
        with c.as_current():
            yield c


def blobs(dtype=np.float64, n=N_ROWS, seed=0):
    X, _ = make_blobs(n, centers=K_CLUSTERS, n_features=3, cluster_std=1.5, random_state=seed)
    return X.astype(dtype)


def weights(n=N_ROWS):
    return np.random.default_rng(1).uniform(0.2, 3.0, size=n)


def assert_same_fit(a, b, rtol, scale):
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, rtol=0, atol=rtol * scale)
    assert abs(b.inertia_ - a.inertia_) <= rtol * 10 * abs(a.inertia_)
    assert b.n_iter_ == a.n_iter_
    assert b.sigma_ == pytest.approx(a.sigma_, rel=rtol, abs=0)
    assert isinstance(b.labels_, da.Array)
    np.testing.assert_array_equal(b.labels_.compute(), a.labels_)


FITS = {
    "hard": dict(assignment="hard"),
    "softmax-sigma": dict(assignment="softmax", sigma=2.0),
    "softmax-anneal": dict(assignment="softmax"),
    "entmax15-anneal": dict(assignment="entmax15"),
}


def fit_params(config, X):
    return dict(FITS[config], init=X[[0, 700, 1001, 2000]], random_state=3)


@pytest.mark.parametrize("weighted", [False, True], ids=["unit", "weighted"])
@pytest.mark.parametrize("config", list(FITS))
def test_fit_equals_numpy_fit(config, weighted):
    X = blobs()
    w = weights() if weighted else None
    ref = RBFKMeans(K_CLUSTERS, **fit_params(config, X)).fit(X, sample_weight=w)
    Xd = da.from_array(X, chunks=(CHUNKS, 3))
    wd = None if w is None else da.from_array(w, chunks=((1500, 1500),))  # rechunked to X's rows
    with dask.config.set(scheduler="threads"):
        fit = RBFKMeans(K_CLUSTERS, **fit_params(config, X)).fit(Xd, sample_weight=wd)
    assert_same_fit(ref, fit, 1e-9, np.abs(X).max())


@pytest.mark.parametrize("assignment", ["hard", "entmax15"])
def test_train_size_draws_the_numpy_fit_s_sample(assignment):
    """``train_size`` learns from a weighted sample drawn by row keys, the
    same rows whatever holds them, and labels every chunk after."""
    X, w = blobs(), weights()
    params = dict(assignment=assignment, train_size=900, random_state=3)
    ref = RBFKMeans(K_CLUSTERS, **params).fit(X, sample_weight=w)
    with dask.config.set(scheduler="threads"):
        fit = RBFKMeans(K_CLUSTERS, **params).fit(
            da.from_array(X, chunks=(CHUNKS, 3)), sample_weight=w
        )
    np.testing.assert_array_equal(fit.cluster_centers_, ref.cluster_centers_)
    np.testing.assert_array_equal(fit.labels_.compute(), ref.labels_)
    assert fit.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)


@pytest.mark.parametrize("config", list(FITS))
def test_cluster_fit_equals_numpy_fit_and_threads_bit_for_bit(client, config):
    X = blobs()
    w = weights()
    params = dict(fit_params(config, X), cooling=0.5)  # fewer temperatures: a faster test
    ref = RBFKMeans(K_CLUSTERS, **params).fit(X, sample_weight=w)
    Xd = da.from_array(X, chunks=(CHUNKS, 3))
    with client.as_current():
        fit = RBFKMeans(K_CLUSTERS, **params).fit(Xd, sample_weight=w)
        assert_same_fit(ref, fit, 1e-9, np.abs(X).max())
    with dask.config.set(scheduler="threads"):
        threads = RBFKMeans(K_CLUSTERS, **params).fit(Xd, sample_weight=w)
    np.testing.assert_array_equal(fit.cluster_centers_, threads.cluster_centers_)
    assert fit.inertia_ == threads.inertia_ and fit.n_iter_ == threads.n_iter_


def test_empty_chunks_are_fine():
    X = blobs()
    Xd = da.from_array(X, chunks=((500, 500, 0, 1000, 1000), (3,)))
    assert Xd.chunks[0][2] == 0
    with dask.config.set(scheduler="threads"):
        for config in ("hard", "entmax15-anneal"):
            ref = RBFKMeans(K_CLUSTERS, **fit_params(config, X)).fit(X)
            fit = RBFKMeans(K_CLUSTERS, **fit_params(config, X)).fit(Xd)
            assert_same_fit(ref, fit, 1e-9, np.abs(X).max())
        seeded = RBFKMeans(K_CLUSTERS, assignment="hard", random_state=0).fit(Xd)
        np.testing.assert_array_equal(seeded.predict(Xd).compute(), seeded.predict(X))


@pytest.mark.parametrize("config", ["hard", "entmax15-anneal"])
def test_float32_fit_is_close_to_numpy(config):
    X = blobs(np.float32)
    params = dict(FITS[config], init=X[[0, 700, 1001, 2000]], random_state=3)
    ref = RBFKMeans(K_CLUSTERS, **params).fit(X)
    with dask.config.set(scheduler="threads"):
        fit = RBFKMeans(K_CLUSTERS, **params).fit(da.from_array(X, chunks=(CHUNKS, 3)))
    assert fit.cluster_centers_.dtype == np.float32
    np.testing.assert_allclose(
        fit.cluster_centers_, ref.cluster_centers_, rtol=0, atol=1e-5 * np.abs(X).max()
    )
    assert fit.inertia_ == pytest.approx(ref.inertia_, rel=1e-5)


def test_predict_proba_transform_score_are_lazy_and_equal(scheduler):
    X = blobs()
    km = RBFKMeans(K_CLUSTERS, assignment="softmax", sigma=3.0, refine=False, random_state=0)
    km.fit(X)
    Xd = da.from_array(X, chunks=(CHUNKS, 3))
    for method in ("predict", "predict_proba", "transform"):
        lazy = getattr(km, method)(Xd)
        assert isinstance(lazy, da.Array), method
        expected = getattr(km, method)(X)
        assert lazy.shape == expected.shape and lazy.dtype == expected.dtype
        np.testing.assert_allclose(lazy.compute(), expected, rtol=1e-12, atol=1e-12)
    w = weights()
    assert km.score(Xd, sample_weight=da.from_array(w, chunks=500)) == pytest.approx(
        km.score(X, sample_weight=w), rel=1e-12
    )
    assert isinstance(km.fit_predict(Xd), da.Array)


def test_anneal_equals_numpy(scheduler):
    X = blobs()
    C0 = np.repeat(X.mean(axis=0, keepdims=True), K_CLUSTERS, axis=0)
    sigma_c = fastrbfkm.critical_temperature(X, K_CLUSTERS, "entmax15")
    sigmas = sigma_c * 1.2 * 0.5 ** np.arange(6)
    ref = fastrbfkm.anneal(X, C0, sigmas, "entmax15", random_state=4)
    Xd = da.from_array(X, chunks=(CHUNKS, 3))
    path = fastrbfkm.anneal(Xd, C0, sigmas, "entmax15", random_state=4)
    scale = np.abs(X).max()
    np.testing.assert_allclose(path.centers, ref.centers, rtol=0, atol=1e-9 * scale)
    np.testing.assert_allclose(path.objective, ref.objective, rtol=1e-9)
    # anneal's default tol is at float64's rounding floor: on which step the
    # shift is first seen below it depends on rounding, the centers do not.
    assert np.abs(path.n_iter - ref.n_iter).max() <= 5


# ------------------------------------------------------------------ seeding


def test_kmeans_parallel_seeds_distinct_rows_reproducibly():
    X = blobs(n=3000, seed=5)
    k = 8
    with dask.config.set(scheduler="threads"):
        rows = make_rows(da.from_array(X, chunks=(CHUNKS, 3)), None)
        seeds = kmeans_parallel(rows, k, np.random.default_rng(0))
        again = kmeans_parallel(rows, k, np.random.default_rng(0))
        other = kmeans_parallel(
            make_rows(da.from_array(X, chunks=(1000, 3)), None), k, np.random.default_rng(0)
        )
    assert seeds.shape == (k, 3) and len(np.unique(seeds, axis=0)) == k
    assert all((X == s).all(axis=1).any() for s in seeds)  # rows of X
    np.testing.assert_array_equal(seeds, again)
    # The draws follow the global row index: other chunks, same seeds, as in memory.
    np.testing.assert_array_equal(seeds, other)
    np.testing.assert_array_equal(
        seeds, kmeans_parallel(InMemoryRows(X, np.empty(0)), k, np.random.default_rng(0))
    )
    assert not np.array_equal(seeds, kmeans_parallel(rows, k, np.random.default_rng(1)))


def test_kmeans_parallel_is_as_good_as_kmeans_plusplus():
    X, _ = make_blobs(4000, centers=10, n_features=5, cluster_std=1.0, random_state=2)
    rows = InMemoryRows(X, np.empty(0))
    seeds = range(10)
    parallel = [rows.inertia(kmeans_parallel(rows, 10, np.random.default_rng(s)))[0] for s in seeds]
    plusplus = [
        rows.inertia(X[seed_indices(X, 10, np.empty(0), np.random.default_rng(s))])[0]
        for s in seeds
    ]
    assert np.mean(parallel) <= 1.2 * np.mean(plusplus)
    ref = RBFKMeans(10, assignment="hard", n_init=3, random_state=0).fit(X)  # k-means++
    with dask.config.set(scheduler="threads"):
        fit = RBFKMeans(10, assignment="hard", n_init=3, random_state=0).fit(
            da.from_array(X, chunks=1000)
        )
    assert fit.inertia_ <= 1.01 * ref.inertia_


def test_random_init_draws_distinct_rows():
    X = blobs()
    with dask.config.set(scheduler="threads"):
        rows = make_rows(da.from_array(X, chunks=(CHUNKS, 3)), weights())
        C = rows.initial_centers(6, "random", np.random.default_rng(0))
    assert len(np.unique(C, axis=0)) == 6
    assert all((X == c).all(axis=1).any() for c in C)


def test_few_distinct_points_still_give_k_centers():
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]]), 50, axis=0)
    with dask.config.set(scheduler="threads"):
        rows = make_rows(da.from_array(X, chunks=40), None)
        C = rows.initial_centers(5, "k-means++", np.random.default_rng(0))
    assert C.shape == (5, 2)
    assert len(np.unique(C, axis=0)) == 3


# --------------------------------------------------------------- bad input


def test_bad_dask_input_names_x():
    km = RBFKMeans(2)
    X = da.from_array(blobs(), chunks=(1000, 2))
    with pytest.raises(ValueError, match=r"X must be chunked along its rows only.*rechunk"):
        km.fit(X)
    with pytest.raises(ValueError, match="X must be a 2-D array"):
        km.fit(da.zeros((10, 2, 2)))
    with pytest.raises(TypeError, match="X must be real-valued"):
        km.fit(da.zeros((10, 2), dtype=complex))
    unknown = da.from_array(blobs(), chunks=500)
    unknown = unknown[unknown[:, 0] > -1e9]
    with pytest.raises(ValueError, match=r"X has unknown chunk sizes"):
        km.fit(unknown)
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        km.fit(da.from_array(blobs(), chunks=500), sample_weight=-da.ones(3000, chunks=500))
    with pytest.raises(ValueError, match="sample_weight must have one entry per row"):
        km.fit(da.from_array(blobs(), chunks=500), sample_weight=da.ones(30, chunks=5))


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e300])
def test_bad_values_raise_instead_of_nan_centers(bad):
    X = blobs()
    X[2500, 1] = bad  # in the last chunks
    Xd = da.from_array(X, chunks=(CHUNKS, 3))
    with dask.config.set(scheduler="threads"):
        with pytest.raises(ValueError, match=r"^X (contains NaN|has values up to)"):
            RBFKMeans(2, assignment="hard").fit(Xd)
        km = RBFKMeans(2, assignment="hard").fit(blobs())
        labels = km.predict(Xd)  # lazy: the chunk is checked when it is computed
        with pytest.raises(ValueError, match=r"^X (contains NaN|has values up to)"):
            labels.compute()
        with pytest.raises(ValueError, match="X has 2 features, but RBFKMeans is expecting 3"):
            km.predict(Xd[:, :2])


def test_integer_input_becomes_float64():
    X = da.from_array(np.arange(40).reshape(20, 2), chunks=7)
    assert check_array(X).dtype == np.float64
    assert check_array(X.astype(np.float32)).dtype == np.float32


def test_import_does_not_import_dask():
    code = "import sys, fastrbfkm; fastrbfkm.RBFKMeans(2).fit([[0.0], [1.0]]); "
    code += "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ----------------------------------------------------------------- faults


def test_worker_killed_mid_fit_gives_the_same_result(client, monkeypatch):
    """SIGKILL one worker process during a distributed fit: its persisted
    chunks and running tasks are lost, dask recomputes them from X's graph,
    the nanny starts a new worker, and the fit ends with the same bits."""
    X = blobs(n=20_000, seed=7)
    Xd = da.from_array(X, chunks=2500)
    # Every pass over the chunks (anneal_size=None: no in-memory copy to anneal).
    params = dict(
        n_clusters=6, assignment="entmax15", cooling=0.5, anneal_size=None, random_state=0
    )
    with dask.config.set(scheduler="threads"):  # the same bits as on the cluster
        reference = RBFKMeans(**params).fit(Xd)
        reference_labels = reference.labels_.compute()

    passes = []
    killed = []
    original = DaskRows.reduce

    def kill_one_worker():
        pid = next(iter(client.run(os.getpid).values()))
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    def reduce(self, name, *args):
        passes.append(name)
        if len(passes) == 30:  # the kill lands while this pass's tasks run
            threading.Timer(0.005, kill_one_worker).start()
        return original(self, name, *args)

    monkeypatch.setattr(DaskRows, "reduce", reduce)
    with client.as_current():
        fit = RBFKMeans(**params).fit(Xd)
        labels = fit.labels_.compute()
    assert killed, "no worker was killed"
    assert len(passes) > 40  # the fit went on well after the kill
    np.testing.assert_array_equal(fit.cluster_centers_, reference.cluster_centers_)
    assert fit.inertia_ == reference.inertia_ and fit.n_iter_ == reference.n_iter_
    np.testing.assert_array_equal(labels, reference_labels)
    client.wait_for_workers(2, timeout=1800)
    assert killed[0] not in client.run(os.getpid).values()
