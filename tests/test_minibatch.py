"""MiniBatchRBFKMeans: the online Lloyd update, the annealed fit over batches,
partial_fit, and the input kinds (numpy, memmap, dask, a stream of batches)."""

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator

import fastrbfkm as fk
from fastrbfkm import MiniBatchRBFKMeans, RBFKMeans
from fastrbfkm.datasets import make_blobs
from fastrbfkm.minibatch import online_update

from . import naive
from .test_estimator import SPARSE_XFAIL


def blobs(n=20_000, k=8, d=3, seed=0, dtype=np.float64):
    X, _ = make_blobs(n, centers=k, n_features=d, random_state=seed, dtype=dtype)
    return X


def test_online_update_from_zero_counts_is_the_batch_mean():
    rng = np.random.default_rng(0)
    C = rng.normal(size=(4, 3))
    N = np.array([2.0, 0.0, 5.0, 1.0])
    S = rng.normal(size=(4, 3)) * N[:, None]
    counts = np.zeros(4)
    new = C.copy()
    online_update(new, counts, N, S)
    np.testing.assert_array_equal(counts, N)
    live = N > 0
    np.testing.assert_allclose(new[live], S[live] / N[live, None], rtol=1e-14)
    np.testing.assert_array_equal(new[~live], C[~live])  # no mass: stays


def test_online_update_is_the_running_mean_of_the_batches():
    """Two batches one after the other give the mean of both (weighted)."""
    rng = np.random.default_rng(1)
    C = rng.normal(size=(3, 2))
    N1, N2 = np.array([1.0, 2.0, 3.0]), np.array([3.0, 1.0, 0.5])
    S1, S2 = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    counts = np.zeros(3)
    online_update(C, counts, N1, S1)
    online_update(C, counts, N2, S2)
    np.testing.assert_allclose(C, (S1 + S2) / (N1 + N2)[:, None], rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("assignment", "sigma"), [("hard", "auto"), ("softmax", 0.7), ("entmax15", 0.7)]
)
def test_one_full_batch_is_a_lloyd_step(dtype, assignment, sigma):
    """From given centers, one partial_fit on all the data is one (soft)
    Lloyd step: the gradient step with rate 1 / (2 N_k)."""
    X = blobs(3001, k=5, seed=2, dtype=dtype)
    w = np.random.default_rng(3).uniform(0.5, 2.0, len(X))
    C0 = X[:5].astype(np.float64) + 0.1
    km = MiniBatchRBFKMeans(5, assignment=assignment, sigma=sigma, init=C0.astype(dtype))
    km.partial_fit(X, sample_weight=w)
    if assignment == "hard":
        want = naive.lloyd(X, C0.astype(dtype), w)
    else:
        N, S = naive.stats(X, C0.astype(dtype), sigma, assignment, w)
        want = S / N[:, None]
    tol = 1e-5 if dtype == np.float32 else 1e-11
    np.testing.assert_allclose(km.cluster_centers_, want, rtol=tol, atol=tol)
    assert km.cluster_centers_.dtype == dtype
    assert km.n_steps_ == 1


@pytest.mark.parametrize("assignment", ["entmax15", "softmax"])
@pytest.mark.parametrize("seed", [0, 1])
def test_annealed_minibatch_fit_within_one_percent_of_the_full_fit(assignment, seed):
    X = blobs(60_000, k=16, d=4, seed=seed)
    full = RBFKMeans(16, assignment=assignment, random_state=0).fit(X)
    mb = MiniBatchRBFKMeans(16, assignment=assignment, batch_size=512, random_state=seed).fit(X)
    assert mb.inertia_ <= 1.01 * full.inertia_
    assert mb.sigma_ == 0.0 and mb.sigma_critical_ > 0
    np.testing.assert_array_equal(mb.labels_, mb.predict(X))
    assert mb.inertia_ == pytest.approx(-mb.score(X), rel=1e-9)


def test_hard_minibatch_fit_on_well_separated_blobs():
    X = blobs(20_000, k=4, d=2, seed=5)
    full = RBFKMeans(4, assignment="hard", random_state=0).fit(X)
    mb = MiniBatchRBFKMeans(4, assignment="hard", batch_size=256, random_state=0).fit(X)
    assert mb.inertia_ <= 1.01 * full.inertia_
    assert mb.sigma_critical_ is None


def test_nearly_empty_clusters_are_reassigned_as_minibatchkmeans_does():
    """A center that takes no rows (here: started far from the data) moves to
    a row of a batch, as scikit-learn's MiniBatchKMeans reassigns it;
    ``reassignment_ratio=0`` leaves it where it is."""
    X, y = make_blobs(8000, centers=4, n_features=2, cluster_std=0.5, random_state=3)
    means = np.array([X[y == j].mean(axis=0) for j in range(4)])
    C0 = np.vstack([means[:3], [[1e3, 1e3]]])
    options = dict(assignment="hard", init=C0, batch_size=256, random_state=0)
    kept = MiniBatchRBFKMeans(4, reassignment_ratio=0.0, **options).fit(X)
    moved = MiniBatchRBFKMeans(4, **options).fit(X)
    np.testing.assert_array_equal(kept.cluster_centers_[3], [1e3, 1e3])
    assert np.bincount(kept.labels_, minlength=4)[3] == 0
    assert np.bincount(moved.labels_, minlength=4).min() > 1000  # every blob has its center
    best = RBFKMeans(4, assignment="hard", init=means).fit(X).inertia_
    assert moved.inertia_ <= 1.01 * best < kept.inertia_
    # partial_fit reassigns as fit does
    stream = MiniBatchRBFKMeans(4, **options)
    for start in range(0, 4096, 256):
        stream.partial_fit(X[start : start + 256])
    assert np.abs(stream.cluster_centers_[3]).max() < 100


@pytest.mark.parametrize("assignment", ["entmax15", "softmax"])
def test_partial_fit_over_a_stream_of_batches(assignment):
    """A generator of batches, as a user streams data: every batch moves the
    centers, the annealing ends within the stream, and the result clusters
    the whole data as well as the full fit (200 batches, 4 a temperature)."""
    X = blobs(40_000, k=8, d=4, seed=1)
    order = np.random.default_rng(0).permutation(len(X))

    def batches():
        for _ in range(5):  # five passes
            for start in range(0, len(X), 1000):
                yield X[order[start : start + 1000]]

    km = MiniBatchRBFKMeans(8, assignment=assignment, random_state=0, anneal_batches=4)
    for batch in batches():
        km.partial_fit(batch)
    assert km.n_steps_ == 200
    assert km.sigma_ == 0.0
    full = RBFKMeans(8, random_state=0).fit(X)
    assert -km.score(X) <= 1.01 * full.inertia_
    # labels_ of the last batch at the updated centers, as MiniBatchKMeans keeps them
    last = X[order[len(X) - 1000 :]]
    np.testing.assert_array_equal(km.labels_, km.predict(last))


def test_the_temperatures_stay_float64_whatever_the_type_of_cooling():
    """A float32 ``cooling`` does not round the temperatures to float32: the
    schedule over batches takes the factor as a Python float."""
    X = blobs(4000, k=6, d=2, seed=0)
    rng = np.random.default_rng(0)
    ours = MiniBatchRBFKMeans(6, cooling=np.float32(0.7), anneal_batches=2, random_state=0)
    theirs = MiniBatchRBFKMeans(6, cooling=float(np.float32(0.7)), anneal_batches=2, random_state=0)
    for _ in range(20):
        batch = X[rng.integers(0, len(X), 400)]
        ours.partial_fit(batch)
        theirs.partial_fit(batch)
        assert type(ours.sigma_) is float and ours.sigma_ == theirs.sigma_
    np.testing.assert_array_equal(ours.cluster_centers_, theirs.cluster_centers_)


def test_a_generator_is_refused_by_name_pointing_to_partial_fit():
    """fit(generator) failed with "float() argument must be ... not 'generator'"."""
    X = blobs(2000, k=3, d=2)
    gen = (X[i : i + 500] for i in range(0, 2000, 500))
    with pytest.raises(TypeError, match=r"got a generator, .*MiniBatchRBFKMeans\.partial_fit"):
        MiniBatchRBFKMeans(3, random_state=0).fit(gen)
    with pytest.raises(TypeError, match="X must be an array"):
        RBFKMeans(3, random_state=0).fit(iter([X]))


def test_partial_fit_checks_the_features_across_calls():
    X = blobs(500, k=3, d=2)
    km = MiniBatchRBFKMeans(3, random_state=0).partial_fit(X)
    assert km.n_features_in_ == 2
    with pytest.raises(ValueError, match="X has 3 features, but MiniBatchRBFKMeans is expecting 2"):
        km.partial_fit(np.ones((10, 3)))
    with pytest.raises(ValueError, match="NaN"):
        km.partial_fit(np.full((10, 2), np.nan))
    km.partial_fit(X[:100])  # still usable
    assert km.n_steps_ == 2


def test_bad_parameters_are_refused_with_their_names():
    X = blobs(500, k=3, d=2)
    for params, name in (
        ({"batch_size": 0}, "batch_size"),
        ({"anneal_batches": 0}, "anneal_batches"),
        ({"max_no_improvement": -1}, "max_no_improvement"),
        ({"cooling": 1.0}, "cooling"),
        ({"sigma": -1.0}, "sigma"),
        ({"reassignment_ratio": -0.1}, "reassignment_ratio"),
    ):
        with pytest.raises(ValueError, match=name):
            MiniBatchRBFKMeans(3, **params).fit(X)
    with pytest.raises(ValueError, match="n_samples=2 should be >= n_clusters=3"):
        MiniBatchRBFKMeans(3).fit(X[:2])


def test_memmap_is_read_a_batch_at_a_time(tmp_path):
    """A file larger than the working memory: batches are read from the map;
    the same seed gives the same centers as the numpy array."""
    from sklearn import config_context

    X = blobs(30_000, k=5, d=3, seed=4, dtype=np.float32)
    path = tmp_path / "X.npy"
    np.save(path, X)
    mapped = np.load(path, mmap_mode="r")
    with config_context(working_memory=0.1):  # MiB: streamed
        km = MiniBatchRBFKMeans(5, batch_size=500, random_state=3).fit(mapped)
    ref = MiniBatchRBFKMeans(5, batch_size=500, random_state=3).fit(X)
    np.testing.assert_array_equal(km.cluster_centers_, ref.cluster_centers_)
    np.testing.assert_array_equal(km.labels_, ref.labels_)
    assert km.inertia_ == pytest.approx(ref.inertia_, rel=1e-6)


def test_dask_array_one_chunk_a_batch():
    da = pytest.importorskip("dask.array")
    import dask

    X = blobs(24_000, k=5, d=3, seed=6)
    dX = da.from_array(X, chunks=(1000, 3))
    with dask.config.set(scheduler="synchronous"):
        km = MiniBatchRBFKMeans(5, random_state=0).fit(dX)
        labels = np.asarray(km.labels_.compute())
    full = RBFKMeans(5, random_state=0).fit(X)
    assert km.inertia_ <= 1.01 * full.inertia_
    np.testing.assert_array_equal(labels, km.predict(X))
    # partial_fit takes a dask batch whole (one pass over its chunks)
    km.partial_fit(dX[:3000])
    assert km.n_steps_ > 1


THREADS_SCRIPT = textwrap.dedent(
    """
    import hashlib, numba, numpy as np
    from fastrbfkm import MiniBatchRBFKMeans
    from fastrbfkm.datasets import make_blobs
    X, _ = make_blobs(50_000, centers=6, n_features=3, random_state=1)
    h = hashlib.sha256()
    for a in ("entmax15", "softmax", "hard"):
        km = MiniBatchRBFKMeans(6, assignment=a, batch_size=4096, random_state=0).fit(X)
        h.update(km.cluster_centers_.tobytes()); h.update(km.labels_.tobytes())
    print(numba.get_num_threads(), h.hexdigest())
    """
)


def test_identical_with_one_and_two_threads():
    """Batches of 4096 rows run their passes in parallel chunks; the centers
    and labels do not depend on the thread count."""
    digests = []
    for threads in (1, 2):
        env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
        out = subprocess.run(
            [sys.executable, "-c", THREADS_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        used, digest = out.stdout.split()
        assert int(used) == threads
        digests.append(digest)
    assert digests[0] == digests[1]


def test_check_estimator():
    estimator = MiniBatchRBFKMeans(batch_size=64, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        results = check_estimator(
            estimator,
            expected_failed_checks={
                **{
                    f"check_sample_weight_equivalence_on_{kind}_data": (
                        "weights scale a drawn row's share; repeating a row changes the draws"
                    )
                    for kind in ("dense", "sparse")
                },
                **SPARSE_XFAIL,
            },
            on_fail=None,
        )
    failed = [
        (r["check_name"], str(r["exception"])[:300]) for r in results if r["status"] == "failed"
    ]
    assert not failed
    assert sum(r["status"] == "passed" for r in results) >= 40


def test_fixed_temperature_fit_stops_by_the_smoothed_free_energy():
    """At a fixed sigma nothing anneals: the stopping rules apply from the
    start (scikit-learn's, on the free energy), not after max_iter passes."""
    X = blobs(50_000, k=4, d=2, seed=8)
    km = MiniBatchRBFKMeans(4, assignment="softmax", sigma=1.0, batch_size=500, random_state=0)
    km.fit(X)
    assert km.sigma_ == 1.0
    assert km.n_steps_ < 100 * len(X) // 500 // 10
    assert km.n_iter_ < 10
    full = RBFKMeans(4, assignment="softmax", sigma=1.0, refine=False, random_state=0).fit(X)
    F = [fk.objective(X, C, 1.0, "softmax") for C in (km.cluster_centers_, full.cluster_centers_)]
    assert F[0] <= F[1] + 0.01 * abs(F[1])


def test_the_end_of_the_annealing_keeps_the_lower_of_its_centers_and_a_kmeans_plusplus_start():
    from fastrbfkm._rows import in_memory

    X, _ = make_blobs(3000, centers=8, random_state=5)
    probe = in_memory(X, np.ones(len(X)))
    on_the_mean = np.repeat(X.mean(axis=0)[None, :], 8, axis=0)  # a Lloyd run stays poor
    seeded = probe.initial_centers(8, "k-means++", np.random.default_rng(0))
    # the swaps go on from the start whose Lloyd run ended lower, either way round
    np.testing.assert_array_equal(
        MiniBatchRBFKMeans._polish(probe, on_the_mean, seeded),
        MiniBatchRBFKMeans._polish(probe, seeded),
    )
    np.testing.assert_array_equal(
        MiniBatchRBFKMeans._polish(probe, seeded, on_the_mean),
        MiniBatchRBFKMeans._polish(probe, seeded),
    )
    assert not np.array_equal(
        MiniBatchRBFKMeans._polish(probe, on_the_mean), MiniBatchRBFKMeans._polish(probe, seeded)
    )


def test_a_model_used_while_still_annealing_says_so():
    """A stream that ends soft (20 batches, sigma_ far above 0) gave
    predict and cluster_centers_ without a hint; a ConvergenceWarning now
    names sigma_ whenever the model is used before its annealing ends, and
    none once it has ended."""
    X = blobs(40_000, k=8, d=4, seed=1)
    rng = np.random.default_rng(0)
    km = MiniBatchRBFKMeans(8, random_state=0)
    for _ in range(20):
        km.partial_fit(X[rng.integers(0, len(X), 1000)])
    assert km.sigma_ > 0
    uses = {
        "predict": lambda: km.predict(X[:10]),
        "transform": lambda: km.transform(X[:10]),
        "score": lambda: km.score(X[:10]),
        "predict_proba": lambda: km.predict_proba(X[:10]),
    }
    for name, use in uses.items():
        with pytest.warns(ConvergenceWarning, match=r"still annealing .* sigma_ = ") as record:
            use()
        assert record[0].filename == __file__, name
    while km.sigma_ > 0 and km.n_steps_ < 2000:
        km.partial_fit(X[rng.integers(0, len(X), 1000)])
    assert km.sigma_ == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for use in uses.values():
            use()
    # a fit whose passes run out before the annealing's end says so too
    with pytest.warns(ConvergenceWarning, match="still annealing"):
        MiniBatchRBFKMeans(8, batch_size=100, max_iter=1, random_state=0).fit(X[:1000])
    # a fixed temperature is soft by choice: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed = MiniBatchRBFKMeans(4, assignment="softmax", sigma=1.0, max_iter=2, random_state=0)
        fixed.fit(X[:2000]).predict(X[:10])
