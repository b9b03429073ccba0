"""RBFKMeans: scikit-learn conventions, agreement with KMeans, annealing,
bad parameters, and the quality of the annealed solution."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import fastrbfkm as fk
from fastrbfkm import RBFKMeans
from fastrbfkm import _kernels as K
from fastrbfkm.datasets import make_blobs

from . import naive

# scikit-learn declares the same expected failure for its own KMeans
# (sklearn/utils/_test_common/instance_generator.py): with k-means++ seeding,
# a weight of 2 draws different random numbers than a repeated row does.
KMEANS_XFAIL = {
    f"check_sample_weight_equivalence_on_{kind}_data": (
        "sample_weight is not equivalent to removing/repeating samples (as for KMeans)."
    )
    for kind in ("dense", "sparse")
}
# scikit-learn's sparse-input checks fit and predict on every sparse format
# (those pass: tests/test_sparse.py), then read predict_proba as a
# classifier's, through classifier tags a clusterer does not have (an
# AttributeError the check reports as a failure).
SPARSE_XFAIL = {
    name: "predict_proba is checked as a classifier's (classifier_tags is None)."
    for name in ("check_estimator_sparse_array", "check_estimator_sparse_matrix")
}


@pytest.mark.parametrize(
    "estimator",
    [RBFKMeans(), RBFKMeans(assignment="hard"), RBFKMeans(assignment="softmax")],
    ids=["entmax15", "hard", "softmax"],
)
def test_check_estimator(estimator):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        results = check_estimator(
            estimator, expected_failed_checks=KMEANS_XFAIL | SPARSE_XFAIL, on_fail=None
        )
    failed = [
        (r["check_name"], str(r["exception"])[:200]) for r in results if r["status"] == "failed"
    ]
    assert not failed
    assert sum(r["status"] == "passed" for r in results) >= 40


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("tol", [1e-4, 0.0])
def test_hard_agrees_with_scikit_learn_lloyd(seed, tol):
    rng = np.random.default_rng(seed)
    n, d, k = rng.integers(50, 400), rng.integers(1, 6), rng.integers(2, 9)
    X = rng.normal(size=(n, d)) + rng.integers(0, 4, size=n)[:, None]
    w = rng.uniform(0.5, 2, size=n) if seed % 2 else None
    init = X[rng.choice(n, size=k, replace=False)]
    ours = RBFKMeans(k, assignment="hard", init=init, max_iter=100, tol=tol)
    ours.fit(X, sample_weight=w)
    ref = KMeans(k, init=init, n_init=1, max_iter=100, tol=tol, algorithm="lloyd")
    ref.fit(X, sample_weight=w)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert ours.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(ours.inertia_, ref.inertia_, rtol=1e-9)
    assert ours.sigma_ == 0.0


def test_empty_clusters_are_relocated_not_nan():
    X = np.array([[0.0], [0.1], [0.2], [10.0], [10.1], [30.0]])
    init = np.array([[0.1], [10.0], [100.0], [200.0]])  # two centers own nothing
    km = RBFKMeans(4, assignment="hard", init=init, max_iter=10).fit(X)
    assert np.isfinite(km.cluster_centers_).all()
    assert len(np.unique(km.labels_)) == 4
    # The farthest point from its center (30 from 10.03) took the first empty center.
    assert km.cluster_centers_[2, 0] == 30.0


def test_fewer_distinct_points_than_clusters_warns_and_works():
    X = np.repeat([[0.0, 0.0], [1.0, 1.0]], 5, axis=0)
    for assignment in ("hard", "softmax", "entmax15"):
        with pytest.warns(ConvergenceWarning, match="distinct clusters"):
            km = RBFKMeans(3, assignment=assignment, random_state=0).fit(X)
        assert np.isfinite(km.cluster_centers_).all()
        assert km.inertia_ == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_annealing_records_its_path(assignment):
    X, _ = make_blobs(600, centers=4, random_state=0)
    km = RBFKMeans(4, assignment=assignment, record_path=True, random_state=0).fit(X)
    path = km.path_
    T = len(path)
    assert T >= 3
    assert path.centers.shape == (T, 4, 2)
    # Temperatures of the geometric schedule, idle ones skipped.
    steps = np.log(path.sigmas[1:] / path.sigmas[:-1]) / np.log(0.8)
    np.testing.assert_allclose(steps, np.round(steps), atol=1e-9)
    assert (np.round(steps) >= 1).all() and (np.round(steps) > 1).any()
    # Starts just above the critical temperature, all centers on the mean.
    sigma_c = fk.critical_temperature(X, 4, assignment)
    assert km.sigma_critical_ == pytest.approx(sigma_c)
    assert path.sigmas[0] == pytest.approx(sigma_c / 0.8)
    np.testing.assert_allclose(path.centers[0], np.repeat(X.mean(0)[None], 4, 0), atol=1e-9)
    # Ahead of refine: a few steps a temperature while centers split
    # (anneal_steps), up to 10 once all are active, down to hard rows.
    assert path.n_active[0] == 1 and path.n_active[-1] == 4
    splitting = path.n_active < 4
    assert (path.n_iter[splitting] <= 3).all() and (path.n_iter[~splitting] <= 10).all()
    if assignment == "entmax15":
        assert path.soft_fraction[-1] == 0 and path.soft_fraction[-2] > 0
    else:
        assert path.off_winner_max[-1] <= 1e-12 < path.off_winner_max[-2]
    # The recorded values are those of the recorded centers, all k of them
    # (spares parked on their leaders included).
    for t in range(T):
        C, sigma = path.centers[t], path.sigmas[t]
        np.testing.assert_allclose(
            path.objective[t], fk.objective(X, C, sigma, assignment), rtol=1e-9
        )
        np.testing.assert_allclose(path.inertia[t], naive.inertia(X, C), rtol=1e-9)
    assert km.n_iter_ >= path.n_iter.sum()
    assert km.sigma_ == 0.0  # refined


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_annealing_without_refine_converges_down_to_hard_rows(assignment):
    X, _ = make_blobs(600, centers=4, random_state=0)
    km = RBFKMeans(4, assignment=assignment, refine=False, record_path=True, random_state=0)
    path = km.fit(X).path_
    assert km.sigma_ == path.sigmas[-1] > 0
    assert path.n_active[-1] == 4 and path.converged.all()
    # Annealing stopped at the first temperature where every row is hard.
    if assignment == "entmax15":
        assert path.soft_fraction[-1] == 0 and path.soft_fraction[-2] > 0
    else:
        assert path.off_winner_max[-1] <= 1e-12 < path.off_winner_max[-2]
    # Every recorded set of centers is a fixed point of the soft step over its
    # distinct centers (spares parked on a leader are not a center of their own).
    scale = np.sqrt(np.trace(np.cov(X.T)))
    for t in range(len(path)):
        C = np.unique(path.centers[t], axis=0)
        assert len(C) == path.n_active[t]
        moved = fk.step(X, C, path.sigmas[t], assignment)
        assert np.abs(moved - C).max() <= 1e-2 * scale
        np.testing.assert_allclose(
            path.objective[t],
            fk.objective(X, path.centers[t], path.sigmas[t], assignment),
            rtol=1e-9,
        )


def test_fixed_temperature_without_refinement_is_a_soft_fixed_point():
    X, _ = make_blobs(500, centers=3, random_state=1)
    km = RBFKMeans(3, assignment="softmax", sigma=2.0, refine=False, tol=1e-12, random_state=0).fit(
        X
    )
    assert km.sigma_ == 2.0
    C = km.cluster_centers_
    np.testing.assert_allclose(fk.step(X, C, 2.0, "softmax"), C, atol=1e-5)
    R = km.predict_proba(X)
    np.testing.assert_allclose(R, fk.responsibilities(X, C, 2.0, "softmax"))
    assert (R.max(axis=1) < 1).any()


def test_methods_follow_scikit_learn_conventions():
    X, _ = make_blobs(300, centers=3, random_state=2)
    km = RBFKMeans(3, random_state=0)
    labels = km.fit_predict(X)
    np.testing.assert_array_equal(labels, km.labels_)
    np.testing.assert_array_equal(km.predict(X), km.labels_)
    D = km.transform(X)
    np.testing.assert_allclose(D, np.sqrt(naive.sqdist(X, km.cluster_centers_)), atol=1e-9)
    np.testing.assert_allclose(km.fit_transform(X), D)
    assert km.score(X) == pytest.approx(-km.inertia_)
    w = np.arange(len(X), dtype=float)
    assert km.score(X, sample_weight=w) == pytest.approx(-naive.inertia(X, km.cluster_centers_, w))
    R = km.predict_proba(X)  # refined (sigma_ = 0): soft memberships at soft_sigma_
    np.testing.assert_array_equal(R.argmax(axis=1), km.labels_)
    np.testing.assert_allclose(R.sum(axis=1), 1.0)
    assert set(np.unique(km.predict_proba(X, sigma=0))) == {0.0, 1.0}
    assert km.n_features_in_ == 2
    X32 = X.astype(np.float32)
    km32 = RBFKMeans(3, random_state=0).fit(X32)
    assert km32.cluster_centers_.dtype == np.float32
    assert km32.transform(X32).dtype == np.float32
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(km)).predict(X), km.labels_)


def test_predict_proba_of_a_default_fit_is_soft_without_refitting():
    """A default fit ends hard, and predict_proba was one-hot."""
    X, _ = make_blobs(600, centers=4, cluster_std=2.5, random_state=3)
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(X))
    km = RBFKMeans(4, random_state=0).fit(X, sample_weight=w)
    assert km.sigma_ == 0
    assert km.soft_sigma_ == pytest.approx(2 * km.inertia_ / (w.sum() * X.shape[1]), rel=1e-12)
    R = km.predict_proba(X)
    np.testing.assert_allclose(R, fk.responsibilities(X, km.cluster_centers_, km.soft_sigma_))
    assert 0.05 < ((R > 0).sum(axis=1) > 1).mean() < 0.9  # rows between clusters are shared
    np.testing.assert_array_equal(R.argmax(axis=1), km.labels_)
    hot = km.predict_proba(X, sigma=10 * km.soft_sigma_)
    assert (hot > 0).sum() > (R > 0).sum()
    assert set(np.unique(km.predict_proba(X, sigma=0))) == {0.0, 1.0}
    soft = RBFKMeans(4, assignment="softmax", random_state=0).fit(X)
    assert soft.soft_sigma_ > 0 and (soft.predict_proba(X) < 1).any()
    fixed = RBFKMeans(4, sigma=3.0, refine=False, random_state=0).fit(X)
    assert fixed.soft_sigma_ == fixed.sigma_ == 3.0
    hard = RBFKMeans(4, assignment="hard", random_state=0).fit(X)
    assert hard.soft_sigma_ is None
    assert set(np.unique(hard.predict_proba(X))) == {0.0, 1.0}
    with pytest.raises(ValueError, match="sigma: an estimator with assignment='hard' has no soft"):
        hard.predict_proba(X, sigma=1.0)
    with pytest.raises(ValueError, match="sigma"):
        km.predict_proba(X, sigma=-1.0)
    mini = fk.MiniBatchRBFKMeans(4, batch_size=200, random_state=0).fit(X)
    assert mini.sigma_ == 0 and mini.soft_sigma_ > 0
    assert ((mini.predict_proba(X) > 0).sum(axis=1) > 1).any()


def test_n_init_keeps_the_best_run():
    """The kept run is the one of lowest inertia among the runs made: each
    run's initial centers are recorded (a callable init) and refitted alone.
    (The old form compared with a single run that shared the first run's
    seed, so it could not fail.)"""
    X, _ = make_blobs(400, centers=6, cluster_std=2.0, random_state=3)
    inits = []

    def init(data, k, random_state):
        inits.append(data[random_state.choice(len(data), k, replace=False)].copy())
        return inits[-1]

    best = RBFKMeans(6, assignment="hard", init=init, n_init=6, random_state=0).fit(X)
    alone = [RBFKMeans(6, assignment="hard", init=C).fit(X).inertia_ for C in inits]
    assert len(inits) == 6 and len({round(v, 6) for v in alone}) > 1  # the seeds matter here
    assert best.inertia_ == min(alone)


BAD_PARAMS = [
    ({"n_clusters": 0}, "n_clusters"),
    ({"n_clusters": 2.5}, "n_clusters"),
    ({"n_clusters": 100}, "n_clusters"),
    ({"assignment": "transform"}, "assignment"),
    ({"sigma": -1.0}, "sigma"),
    ({"sigma": "hot"}, "sigma"),
    ({"sigma": 1.0, "sigma_min": 2.0}, "sigma_min"),
    ({"sigma_min": 0.0}, "sigma_min"),
    ({"cooling": 1.0}, "cooling"),
    ({"cooling": 0.0}, "cooling"),
    ({"init": "kmeans"}, "init"),
    ({"init": np.zeros((2, 2))}, "init"),
    ({"init": np.zeros((3, 5))}, "init"),
    ({"n_init": 0}, "n_init"),
    ({"max_iter": 0}, "max_iter"),
    ({"anneal_steps": 0}, "anneal_steps"),
    ({"anneal_size": 0}, "anneal_size"),
    ({"anneal_size": "all"}, "anneal_size"),
    ({"train_size": 0}, "train_size"),
    ({"train_size": "auto"}, "train_size"),
    ({"tol": -1.0}, "tol"),
    ({"refine": "yes"}, "refine"),
]


@pytest.mark.parametrize(("params", "name"), BAD_PARAMS)
def test_bad_parameters_name_the_parameter_and_keep_the_fit(params, name):
    X, _ = make_blobs(60, centers=3, n_features=2, random_state=4)
    km = RBFKMeans(3, random_state=0).fit(X)
    before = {k: v for k, v in vars(km).items() if k.endswith("_")}
    km.set_params(**params)
    with pytest.raises(ValueError, match=name):
        km.fit(X + 1.0)
    after = {k: v for k, v in vars(km).items() if k.endswith("_")}
    assert before.keys() == after.keys()
    for key, value in before.items():
        assert after[key] is value, key


@pytest.mark.parametrize(
    "params", [{"n_clusters": 2.5}, {"n_init": 1.0}, {"sigma": [1.0]}, {"refine": "yes"}]
)
def test_parameters_of_the_wrong_type_raise_type_error(params):
    """As everywhere in fastrbfkm and scikit-learn: TypeError for a wrong type
    (scikit-learn's InvalidParameterError is both a TypeError and a ValueError)."""
    X, _ = make_blobs(60, centers=3, n_features=2, random_state=4)
    with pytest.raises(TypeError, match=next(iter(params))):
        RBFKMeans(3, **params).fit(X)


@pytest.mark.parametrize(
    "name", ["n_clusters", "n_init", "max_iter", "anneal_steps", "anneal_size", "train_size"]
)
def test_booleans_are_not_counts(name):
    """``True`` is an int in Python: it fitted as one cluster (or one run,
    or one iteration) without a word; scikit-learn's KMeans refuses it."""
    X, _ = make_blobs(60, centers=3, n_features=2, random_state=4)
    with pytest.raises(TypeError, match=f"{name} must be an integer, not a boolean"):
        RBFKMeans(**{"n_clusters": 3, name: True}).fit(X)


@pytest.mark.parametrize("name", ["max_iter", "n_init", "n_clusters"])
def test_integers_beyond_int64_are_refused_by_name(name):
    """``max_iter=10**30`` failed inside numba (non-precise type pyobject)."""
    X, _ = make_blobs(60, centers=3, n_features=2, random_state=4)
    with pytest.raises(ValueError, match=f"{name} must be at most"):
        RBFKMeans(**{"n_clusters": 3, name: 10**30}).fit(X)


def test_an_init_array_with_n_init_auto_is_one_run():
    """``init=<array>, n_init="auto"`` compared the array with "random"."""
    X, _ = make_blobs(90, centers=3, n_features=2, random_state=4)
    init = X[:3].copy()
    km = RBFKMeans(3, init=init, n_init="auto", assignment="hard").fit(X)
    ref = RBFKMeans(3, init=init, n_init=1, assignment="hard").fit(X)
    np.testing.assert_array_equal(km.cluster_centers_, ref.cluster_centers_)


def test_init_shape_errors_read_as_scikit_learns():
    X, _ = make_blobs(60, centers=3, n_features=2, random_state=4)
    clusters = r"The shape of the initial centers \(2, 2\) does not match the number of clusters 3"
    with pytest.raises(ValueError, match=clusters):
        RBFKMeans(3, init=np.zeros((2, 2))).fit(X)
    features = (
        r"The shape of the initial centers \(3, 5\) does not match the number of features "
        r"of the data 2"
    )
    with pytest.raises(ValueError, match=features):
        RBFKMeans(3, init=np.zeros((3, 5))).fit(X)


def test_bad_data_and_unfitted_use():
    km = RBFKMeans(2)
    with pytest.raises(NotFittedError):
        km.predict(np.zeros((2, 2)))
    X, _ = make_blobs(40, centers=2, random_state=5)
    km.fit(X)
    with pytest.raises(ValueError, match="X has 3 features"):
        km.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        km.fit(np.full((5, 2), np.nan))
    with pytest.raises(ValueError, match="sample_weight"):
        km.fit(X, sample_weight=-np.ones(len(X)))
    with pytest.raises(ValueError, match="overflow"):
        km.fit(X * 1e160)


def test_kmeans_plusplus_is_seeded_and_spreads_out():
    X, y = make_blobs(2000, centers=5, cluster_std=0.3, random_state=6)
    C1, i1 = fk.kmeans_plusplus(X, 5, random_state=0)
    _, i2 = fk.kmeans_plusplus(X, 5, random_state=0)
    np.testing.assert_array_equal(i1, i2)
    np.testing.assert_array_equal(C1, X[i1])
    assert len(set(y[i1])) == 5  # one seed in every well-separated blob
    _, i3 = fk.kmeans_plusplus(X, 5, sample_weight=(y == 0) + 1e-9 * (y != 0), random_state=0)
    assert y[i3[0]] == 0


def _quality_cases():
    scale = StandardScaler()
    return {
        "blobs-separated": (make_blobs(3000, centers=8, cluster_std=1.0, random_state=1)[0], 8),
        "blobs-overlapping": (make_blobs(3000, centers=8, cluster_std=3.0, random_state=2)[0], 8),
        "iris": (scale.fit_transform(load_iris().data), 3),
        "wine": (scale.fit_transform(load_wine().data), 3),
        "digits": (scale.fit_transform(load_digits().data), 10),
    }


@pytest.mark.parametrize("name", list(_quality_cases()))
def test_annealed_inertia_is_no_worse_than_kmeans_n_init_10(name):
    X, k = _quality_cases()[name]
    ref = KMeans(k, n_init=10, random_state=0).fit(X).inertia_
    ours = RBFKMeans(k, assignment="entmax15", random_state=0).fit(X).inertia_
    assert ours <= 1.0005 * ref


def _many_modes(n, d, modes, seed):
    """Anisotropic Gaussian modes of Dirichlet-mixed sizes: more modes than centers."""
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(modes, d))
    labels = rng.choice(modes, size=n, p=rng.dirichlet(np.ones(modes)))
    std = rng.uniform(0.2, 0.6, size=(modes, d))[labels]
    return (means[labels] + std * rng.normal(size=(n, d))).astype(np.float32)


def test_annealing_alone_gives_centers_out_by_gain_on_data_with_more_modes_than_centers():
    # 512 modes, 128 centers, 32 features: every split cell is unstable at
    # once; splitting them all doubled the centers a temperature, each
    # branch getting the same number whatever its mass (1.077 of KMeans's
    # inertia); giving the spares out by gain ends below it (0.977).
    X = _many_modes(6000, 32, 512, seed=1)
    ref = KMeans(128, n_init=1, random_state=0).fit(X).inertia_
    annealed = RBFKMeans(128, refine=False, random_state=0).fit(X)
    assert annealed.inertia_ < ref


def test_the_polish_goes_on_from_the_lower_of_the_annealing_and_kmeans_plusplus(monkeypatch):
    blobs, _ = make_blobs(3000, centers=5, random_state=3)
    assert RBFKMeans(5, random_state=0).fit(blobs).start_ == "annealing"
    X = _many_modes(3000, 8, 60, seed=2)
    km = RBFKMeans(20, random_state=0).fit(X)
    assert km.start_ in ("annealing", "k-means++")
    assert RBFKMeans(20, assignment="hard", random_state=0).fit(X).start_ is None
    assert RBFKMeans(20, refine=False, random_state=0).fit(X).start_ is None
    # An annealing that went wrong (every center left on the mean) is
    # replaced by the k-means++ start, brought to its Lloyd fixed point.
    import fastrbfkm.estimator as E

    real = E.run_anneal

    def on_the_mean(rows, C, *args, **kwargs):
        path = real(rows, C, *args, **kwargs)
        path.centers[-1] = rows.moments().mean
        return path

    monkeypatch.setattr(E, "run_anneal", on_the_mean)
    rescued = RBFKMeans(20, random_state=0).fit(X)
    assert rescued.start_ == "k-means++"
    assert rescued.inertia_ <= 1.01 * km.inertia_
    assert len(np.unique(rescued.labels_)) == 20


def test_sigma_min_and_cooling_set_the_schedule():
    X, _ = make_blobs(300, centers=3, random_state=7)
    km = RBFKMeans(
        3, sigma_min=0.5, cooling=0.5, record_path=True, refine=False, random_state=0
    ).fit(X)
    sig = km.path_.sigmas
    np.testing.assert_allclose(sig[1:] / sig[:-1], 0.5)
    assert sig[-1] <= 0.5 < sig[-2]
    assert km.sigma_ == sig[-1]
    # A float sigma with sigma_min anneals from sigma, starting at init.
    km = RBFKMeans(3, sigma=4.0, sigma_min=1.0, record_path=True, random_state=0).fit(X)
    np.testing.assert_allclose(
        km.path_.sigmas, [4.0, 3.2, 2.56, 2.048, 1.6384, 1.31072, 1.048576, 0.8388608]
    )
    assert km.sigma_critical_ is None and km.sigma_ == 0.0


def test_init_options():
    X, _ = make_blobs(300, centers=3, random_state=8)
    for init in ("k-means++", "random", X[:3]):
        km = RBFKMeans(3, assignment="hard", init=init, random_state=0).fit(X)
        assert np.isfinite(km.cluster_centers_).all()
    with pytest.warns(RuntimeWarning, match="only one init"):
        RBFKMeans(3, assignment="hard", init=X[:3], n_init=3).fit(X)


def test_verbose_prints_progress_over_temperatures(capsys):
    X, _ = make_blobs(200, centers=2, random_state=9)
    RBFKMeans(2, random_state=0).fit(X)
    assert capsys.readouterr().out == ""
    try:
        import tqdm  # noqa: F401
    except ImportError:
        RBFKMeans(2, verbose=1, random_state=0).fit(X)
        out = capsys.readouterr().out
        assert out.count("[RBFKMeans]") >= 2 and "sigma=" in out
    else:  # the bar goes to stderr
        RBFKMeans(2, verbose=1, random_state=0).fit(X)
        assert "annealing" in capsys.readouterr().err


def test_swaps_fix_a_misallocated_lloyd_fixed_point():
    from fastrbfkm._rows import InMemoryRows
    from fastrbfkm.lloyd import improve_by_swaps, run_lloyd

    rng = np.random.default_rng(10)
    means = np.array([[0.0, 0.0], [20.0, 0.0], [40.0, 0.0]])
    X = np.concatenate([m + rng.normal(size=(200, 2)) for m in means])
    rows = InMemoryRows(X, np.empty(0))
    # Two centers share the first blob, one sits between the other two.
    stuck = run_lloyd(rows, np.array([[-0.5, 0.0], [0.5, 0.0], [30.0, 0.0]]), 100, 0.0)
    better = improve_by_swaps(rows, stuck, 100, 0.0)
    assert better.inertia < 0.2 * stuck.inertia
    np.testing.assert_allclose(np.sort(better.centers[:, 0]), [0, 20, 40], atol=0.3)
    assert better.n_iter > stuck.n_iter
    # At the optimum nothing moves.
    again = improve_by_swaps(rows, better, 100, 0.0)
    np.testing.assert_array_equal(again.centers, better.centers)


def test_a_trial_that_cannot_win_gives_up_and_one_that_can_runs_to_the_end():
    from fastrbfkm._rows import InMemoryRows
    from fastrbfkm.lloyd import run_lloyd

    X = np.random.default_rng(3).uniform(size=(3000, 5))  # no clusters: Lloyd creeps
    rows = InMemoryRows(X, np.empty(0))
    C = X[:6].copy()
    seen = []
    full = run_lloyd(rows, C, 300, 0.0, report=lambda i, inertia, shift: seen.append(inertia))
    assert full.n_iter > 100
    bar = 0.95 * full.inertia  # out of reach
    gave_up = run_lloyd(rows, C, 300, 0.0, beat=bar)
    assert gave_up.n_iter < full.n_iter / 2
    assert gave_up.inertia > bar
    assert gave_up.inertia >= rows.inertia(gave_up.centers)[0]  # never claims less
    # a run still creeping when it crosses its bar, at the 20th iteration, is
    # not given up (one that would cross it only after 30 is: the rule's price)
    within = run_lloyd(rows, C, 300, 0.0, beat=seen[20])
    assert within.n_iter == full.n_iter and within.inertia == full.inertia
    np.testing.assert_array_equal(within.centers, full.centers)


def test_a_trial_is_judged_losing_only_on_shrinking_decreases():
    from fastrbfkm.lloyd import _losing

    # A trial that settles, creeps, then speeds up as a center crosses a
    # cluster and ends below the bar (a swap trial of a real fit, rounded).
    winner = [84035, 78731, 78479, 78283, 78083, 77845, 77561, 77209, 76815, 76392, 75911,
              75352, 74816, 74357, 73995, 73746, 73606, 73530, 73486, 73459, 73445]  # fmt: skip
    bar = 73493.0
    assert not any(_losing(winner[:j], bar) for j in range(1, len(winner) + 1))
    # Its decreases shrinking once more (252, 196, 150) before they grow:
    # too few shrinking decreases in a row to judge.
    early = [*winner[:4], 78133, 77933, 77700]
    assert not any(_losing(early[:j], bar) for j in range(1, len(early) + 1))
    # Decreases shrinking by half: at most the last one left, far above the bar.
    loser = [1000.0 + 64.0 * 0.5**j for j in range(8)]
    assert _losing(loser, 900.0)
    assert not _losing(loser[:5], 900.0)  # the first decrease never counts
    assert not _losing(loser, 1000.0 + 64.0 * 0.5**7 - 1e-9)  # within reach


def test_swaps_with_many_clusters_move_many_centers_a_round_within_a_bounded_cost():
    from fastrbfkm._rows import InMemoryRows
    from fastrbfkm._tunables import MANY_CLUSTERS
    from fastrbfkm.datasets import make_blobs as blobs
    from fastrbfkm.lloyd import (
        _apart_regions,
        improve_by_swaps,
        improve_by_transfers,
        run_lloyd,
    )

    k = MANY_CLUSTERS
    X = blobs(12_000, centers=4 * k, n_features=4, random_state=0)[0]
    rows = InMemoryRows(X, np.empty(0))
    start = run_lloyd(rows, X[np.random.default_rng(0).choice(len(X), k, replace=False)], 300, 0.0)
    runs = []

    def counted(*args, **kwargs):
        runs.append(args)
        return run_lloyd(*args, **kwargs)

    import fastrbfkm.lloyd as lloyd

    lloyd.run_lloyd, original = counted, lloyd.run_lloyd
    try:
        better = improve_by_swaps(rows, start, 300, 0.0)
    finally:
        lloyd.run_lloyd = original
    assert better.inertia < 0.99 * start.inertia  # the search earns its keep
    # at most log2(k) rounds of two Lloyd runs (and the last round's singles)
    assert len(runs) <= 2 * int(np.ceil(np.log2(k))) + 8
    np.testing.assert_allclose(better.inertia, rows.inertia(better.centers)[0], rtol=1e-12)
    # the moves of a round are apart: no move's centers lie in another's
    # region, but regions may share neighbours (disjoint regions let through
    # fewer moves than asked where some centers are near many)
    C = start.centers
    costs = rows.cell_summary(C, False).costs
    assert len(_apart_regions(C, costs[::-1].copy(), costs, 4)) == 4
    regions = _apart_regions(C, costs[::-1].copy(), costs, k)
    assert all(r in region and s in region for (r, s), region in regions)
    for i, ((r, s), _) in enumerate(regions):
        others = [region for j, (_, region) in enumerate(regions) if j != i]
        assert not np.isin([r, s], np.concatenate(others)).any()
    seen = np.concatenate([region for _, region in regions])
    assert np.unique(seen).size < seen.size
    # the row-by-row transfers are skipped with many centers
    assert improve_by_transfers(rows, better, 10) is better


def test_large_fits_anneal_a_sample_then_finish_on_every_row():
    X, _ = make_blobs(24_000, centers=6, cluster_std=1.5, random_state=4)
    full = RBFKMeans(6, anneal_size=None, random_state=0).fit(X)
    sampled = RBFKMeans(6, anneal_size=3000, record_path=True, random_state=0).fit(X)
    # Near-equal optima: the sample's path may end in another one.
    assert sampled.inertia_ <= full.inertia_ * (1 + 1e-3)
    # The path is the sample's: its weights stand for all of X.
    path = sampled.path_
    assert path.inertia[0] == pytest.approx(naive.inertia(X, path.centers[0]), rel=0.05)
    # Lloyd's algorithm on every row finished: the centers are the means of
    # their cells (to the tolerance: a step moves them by a squared shift of
    # at most tol times the mean feature variance), the labels and inertia
    # those of X.
    C = sampled.cluster_centers_
    assert ((fk.step(X, C, 0.0) - C) ** 2).sum() <= 1e-4 * X.var(axis=0).mean()
    np.testing.assert_array_equal(sampled.labels_, naive.sqdist(X, C).argmin(axis=1))
    assert sampled.inertia_ == pytest.approx(naive.inertia(X, C), rel=1e-9)


def test_auto_anneal_size_holds_the_work_then_rows_a_center():
    from fastrbfkm._tunables import (
        ANNEAL_ROWS_MIN,
        ANNEAL_ROWS_PER_CENTER,
        MANY_CLUSTERS,
    )
    from fastrbfkm.annealing import auto_anneal_size

    sizes = {k: auto_anneal_size(k) for k in range(1, 4097)}
    # The minimum up to many clusters: those fits are unchanged.
    assert all(sizes[k] == ANNEAL_ROWS_MIN for k in range(1, MANY_CLUSTERS + 1))
    # Beyond: the rows x centers of a soft pass no more than at
    # MANY_CLUSTERS until the rows a center take over; never fewer than
    # those, however many centers (no cap: a thin sample is overfitted).
    for k, m in sizes.items():
        assert m >= ANNEAL_ROWS_PER_CENTER * k
        if ANNEAL_ROWS_PER_CENTER * k <= ANNEAL_ROWS_MIN * MANY_CLUSTERS / k:
            assert m * k <= ANNEAL_ROWS_MIN * MANY_CLUSTERS
    assert sizes[4096] == ANNEAL_ROWS_PER_CENTER * 4096


def test_auto_anneal_size_is_the_rows_annealed(monkeypatch):
    """Anneal size "auto" fits as the int it stands for, in the estimator and the
    phase diagram (one formula, read by both)."""
    import fastrbfkm.annealing as annealing

    monkeypatch.setattr(annealing, "ANNEAL_ROWS_MIN", 600)
    X, _ = make_blobs(2000, centers=12, n_features=3, random_state=2)
    m = annealing.auto_anneal_size(12)
    assert m < len(X)
    auto = RBFKMeans(12, random_state=0).fit(X)
    given = RBFKMeans(12, anneal_size=m, random_state=0).fit(X)
    every = RBFKMeans(12, anneal_size=None, random_state=0).fit(X)
    np.testing.assert_array_equal(auto.cluster_centers_, given.cluster_centers_)
    assert not np.array_equal(auto.cluster_centers_, every.cluster_centers_)
    a = fk.phase_diagram(X, 4, random_state=0)
    b = fk.phase_diagram(X, 4, anneal_size=m, random_state=0)
    np.testing.assert_array_equal(a.sigmas, b.sigmas)
    np.testing.assert_array_equal(a.centers, b.centers)


def test_default_fit_ends_where_no_single_row_move_pays():
    # Overlapping blobs: Lloyd fixed points a single-row move improves exist.
    X, _ = make_blobs(1500, centers=6, cluster_std=2.5, random_state=11)
    w = np.random.default_rng(1).uniform(0.5, 2.0, size=len(X))
    km = RBFKMeans(6, random_state=0).fit(X, sample_weight=w)
    _, _, _, moves, _ = K.transfer_sweeps(X, w, km.labels_, 6, 10)
    assert moves == 0
    hard = RBFKMeans(6, assignment="hard", random_state=0).fit(X, sample_weight=w)
    assert km.inertia_ <= hard.inertia_ * (1 + 1e-12)


def test_n_init_auto_follows_scikit_learn():
    """'auto': ten runs for init='random' or a callable, one otherwise."""
    X, _ = make_blobs(300, centers=4, random_state=3)
    for init, runs in [("random", 10), ("k-means++", 1)]:
        auto = RBFKMeans(4, assignment="hard", init=init, n_init="auto", random_state=0).fit(X)
        fixed = RBFKMeans(4, assignment="hard", init=init, n_init=runs, random_state=0).fit(X)
        np.testing.assert_array_equal(auto.cluster_centers_, fixed.cluster_centers_)
        assert auto.n_iter_ == fixed.n_iter_
    with pytest.raises(ValueError, match="'n_init' parameter of RBFKMeans must be"):
        RBFKMeans(4, n_init="many").fit(X)


def test_callable_init_is_called_as_scikit_learn_calls_it():
    X, _ = make_blobs(300, centers=4, random_state=3)
    calls = []

    def init(data, n_clusters, random_state):
        calls.append((type(data), n_clusters, type(random_state)))
        return data[random_state.choice(len(data), n_clusters, replace=False)]

    RBFKMeans(4, assignment="hard", init=init, n_init=3, random_state=0).fit(X)
    assert calls == [(np.ndarray, 4, np.random.RandomState)] * 3
    # one run of a callable that returns given centers is a fit from those centers
    one = RBFKMeans(4, assignment="hard", init=lambda X, k, rs: X[:k], random_state=0).fit(X)
    given = RBFKMeans(4, assignment="hard", init=X[:4], random_state=0).fit(X)
    np.testing.assert_array_equal(one.cluster_centers_, given.cluster_centers_)
    with pytest.raises(ValueError, match=r"init must have shape \(n_clusters, n_features\)"):
        RBFKMeans(4, assignment="hard", init=lambda X, k, rs: X[:3]).fit(X)


def test_verbose_reports_hard_iterations_as_scikit_learn(capsys):
    X, _ = make_blobs(300, centers=4, random_state=3)
    km = RBFKMeans(4, assignment="hard", random_state=0, verbose=1).fit(X)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Initialization complete"
    iterations = [line for line in out if line.startswith("Iteration ")]
    assert len(iterations) == km.n_iter_
    assert iterations[0].startswith("Iteration 0, inertia ")
    inertias = [float(line.split("inertia ")[1].rstrip(".")) for line in iterations]
    assert all(b <= a * (1 + 1e-12) for a, b in itertools.pairwise(inertias))  # Lloyd descends
    assert out[-1].startswith(f"Converged at iteration {km.n_iter_ - 1}:")


@pytest.mark.parametrize("assignment", ["hard", "entmax15"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_train_size_learns_from_a_sample_and_labels_every_row(assignment, dtype):
    X, _ = make_blobs(3001, centers=7, cluster_std=1.5, random_state=5)
    X = X.astype(dtype)
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=len(X))
    km = RBFKMeans(7, assignment=assignment, train_size=700, random_state=0)
    km.fit(X, sample_weight=w)
    C = km.cluster_centers_
    assert C.dtype == dtype and C.shape == (7, 2)
    # Every row labelled at the learnt centers, the inertia over every row.
    np.testing.assert_array_equal(km.labels_, naive.sqdist(X, C).argmin(axis=1))
    np.testing.assert_array_equal(km.predict(X), km.labels_)
    assert km.inertia_ == pytest.approx(naive.inertia(X, C, w), rel=1e-5)
    # Reproducible; another seed draws another sample.
    again = RBFKMeans(7, assignment=assignment, train_size=700, random_state=0)
    np.testing.assert_array_equal(again.fit(X, sample_weight=w).cluster_centers_, C)
    # The centers are not those of every row: Lloyd on every row moves them.
    full = RBFKMeans(7, assignment=assignment, random_state=0).fit(X, sample_weight=w)
    assert not np.array_equal(full.cluster_centers_, C)
    assert km.inertia_ <= full.inertia_ * 1.05


def test_train_size_below_n_clusters_names_train_size():
    X, _ = make_blobs(300, centers=3, random_state=1)
    with pytest.raises(ValueError, match="train_size=5 should be >= n_clusters=10"):
        RBFKMeans(10, train_size=5).fit(X)
    RBFKMeans(10, train_size=10, random_state=0).fit(X)  # as many rows as centers: fits


def test_train_size_of_every_row_or_more_is_the_default_fit():
    X, _ = make_blobs(800, centers=5, random_state=1)
    default = RBFKMeans(5, random_state=3).fit(X)
    for size in (800, 10**6):
        same = RBFKMeans(5, train_size=size, random_state=3).fit(X)
        np.testing.assert_array_equal(same.cluster_centers_, default.cluster_centers_)
        assert same.inertia_ == default.inertia_


def test_train_size_learns_from_the_sample_only():
    """Rows left out of the sample do not move the centers: far outliers
    that the sample misses get labels but no center."""
    X, _ = make_blobs(2000, centers=3, random_state=2)
    rng = np.random.default_rng(0)
    X = np.vstack([X, 1e3 + rng.normal(size=(2, 2))])
    km = RBFKMeans(3, assignment="hard", train_size=200, random_state=0).fit(X)
    full = RBFKMeans(3, assignment="hard", random_state=0).fit(X)
    assert np.abs(km.cluster_centers_).max() < 100  # no center went to the outliers
    assert np.abs(full.cluster_centers_).max() > 100  # every row: one did
    assert km.labels_.shape == (2002,)


@pytest.mark.parametrize("kind", ["csr", "cosine"])
def test_train_size_on_sparse_and_cosine_input(kind):
    X, _ = make_blobs(1500, centers=4, n_features=6, random_state=3)
    X = np.abs(X) + 0.1
    metric = "cosine" if kind == "cosine" else "euclidean"
    data = sp.csr_matrix(X) if kind == "csr" else X
    km = RBFKMeans(4, train_size=300, metric=metric, random_state=0).fit(data)
    Xu = X / np.linalg.norm(X, axis=1, keepdims=True) if kind == "cosine" else X
    np.testing.assert_array_equal(km.labels_, naive.sqdist(Xu, km.cluster_centers_).argmin(axis=1))
    expected = naive.inertia(Xu, km.cluster_centers_)
    assert km.inertia_ == pytest.approx(expected / 2 if kind == "cosine" else expected, rel=1e-9)
