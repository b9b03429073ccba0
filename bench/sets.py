"""The data sets of ``bench/fit_suite.py`` and ``bench/under_load.py``.

Every set is generated here with numpy only (seeded; nothing is downloaded)
or loaded from scikit-learn's bundled files, and comes with the means of its
true clusters, so a fit can be checked for true clusters left without a
center.

2-D sets generated like the classic clustering benchmark sets of Fränti et
al. (https://cs.uef.fi/sipu/datasets/); coordinates are on the originals'
scales (up to about 1e6), float64:

S-sets ``s1`` .. ``s4``
    5000 points in 15 Gaussian clusters (333 or 334 points each). The 15
    means are drawn uniformly in ``[0.1, 0.9]^2`` at least 0.15 apart
    (rejection sampling); every cluster has its own orientation (uniform
    angle) and axis scales (``spread * U(0.6, 1.4)`` per axis). The four
    sets share the means, shapes and standard-normal draws and differ only
    in ``spread`` (0.025, 0.04, 0.055, 0.07 of the square's side), from well
    separated (s1) to strongly overlapping (s4). Scaled by 1e6.
A-sets ``a1``, ``a2``, ``a3``
    20, 35 and 50 isotropic Gaussian clusters of 150 points each (3000,
    5250 and 7500 points) with standard deviation 0.16, means at least 0.75
    apart and at one cluster per unit area: a1's 20 means lie in
    ``[0, 4] x [0, 5]``, a2 adds 15 in ``[4, 7] x [0, 5]`` and a3 another 15
    in ``[7, 10] x [0, 5]``, so a1's clusters are in a2 and a2's in a3, as
    in the originals. Scaled by 6000.
``birch1``
    100,000 points in 100 Gaussian clusters of 1000 points on a 10 x 10 grid
    of spacing 1e5, standard deviation ``1e5 / (4 sqrt 2)`` per coordinate
    (BIRCH's grid pattern: radius sqrt 2, grid spacing 4 radii).
``birch2``
    100,000 points in 100 Gaussian clusters of 1000 points whose means lie on
    a sine curve, ``x_i = 1e4 i``, ``y_i = 1e5 sin(2 pi 4 i / 100)``
    (four periods), standard deviation ``1e4 / (4 sqrt 2)`` per coordinate.

Other sets:

``demo``
    The README demo's data, ``fastrbfkm.datasets.make_blobs(1_000_000,
    centers=8, n_features=2, cluster_std=1.0, random_state=0,
    dtype=np.float32)`` (as ``python -m fastrbfkm demo``), k = 8.
``blobs32``
    ``make_blobs(200_000, centers=64, n_features=32, random_state=0,
    dtype=np.float32)``, k = 64.
``blobs16``
    ``make_blobs(100_000, centers=32, n_features=16, random_state=0)``
    (float64), k = 32.
``digits``
    ``sklearn.datasets.load_digits`` standardized with ``StandardScaler``
    (1797 x 64, float64), k = 10; the true clusters are the digit labels.

The true means of the generated 2-D sets are the generating means; those of
the make_blobs sets and of digits are the sample means of each label.

Overlap, as the fraction of points nearer another cluster's mean than their
own: s1 0.3%, s2 4.5%, s3 14%, s4 24%, a1-a3 0.4-0.7%, birch1 0.9%, birch2
0.1%, demo 11% (two of its blobs are 1.0 apart at standard deviation 1),
blobs32 and blobs16 0%. A set counts as *separated* (``BenchSet.separated``:
every true cluster should get a center) below 5%: all but s3, s4, demo and
digits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from fastrbfkm.datasets import make_blobs

SEED = 12


@dataclass(frozen=True)
class BenchSet:
    """A named data set: its shape, dtype and a function that makes it.

    ``make()`` returns ``(X, means)``: the data and the ``(k, d)`` means of
    its true clusters. ``separated``: fewer than 5% of the points lie nearer
    another true mean than their own, so every true cluster should get a
    center. ``classic``: one of the 2-D sets generated like Fränti's.
    """

    name: str
    n: int
    d: int
    k: int
    dtype: type
    make: Callable[[], tuple[np.ndarray, np.ndarray]]
    separated: bool = True
    classic: bool = False

    @property
    def large(self) -> bool:
        """At least 100,000 rows (the issue's stricter time target)."""
        return self.n >= 100_000


# ------------------------------------------------------------ building blocks


def separated_means(
    rng: np.random.Generator,
    count: int,
    low: tuple[float, float],
    high: tuple[float, float],
    min_dist: float,
    existing: np.ndarray | None = None,
    max_tries: int = 100_000,
) -> np.ndarray:
    """``count`` points uniform in the box ``[low, high]``, each at least
    ``min_dist`` from the others and from ``existing`` (rejection sampling)."""
    means = [] if existing is None else list(existing)
    start = len(means)
    for _ in range(max_tries):
        if len(means) - start == count:
            return np.array(means[start:])
        p = rng.uniform(low, high)
        if all(np.hypot(*(p - q)) >= min_dist for q in means):
            means.append(p)
    raise RuntimeError(f"could not place {count} means {min_dist} apart in {max_tries} tries")


def even_labels(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` labels, ``k`` clusters of sizes differing by at most one, shuffled."""
    y = np.arange(n) % k
    rng.shuffle(y)
    return y


def gaussian_points(
    rng: np.random.Generator, means: np.ndarray, scales: np.ndarray, y: np.ndarray
) -> np.ndarray:
    """Rows ``means[y] + R_y diag(scales[y]) z`` with ``z`` standard normal and
    ``R_j`` a rotation by a uniform angle per cluster (drawn before ``z``)."""
    angles = rng.uniform(0.0, np.pi, size=len(means))
    cos, sin = np.cos(angles), np.sin(angles)
    rot = np.stack([np.stack([cos, -sin], 1), np.stack([sin, cos], 1)], 1)  # (k, 2, 2)
    z = rng.standard_normal((len(y), 2)) * scales[y]
    return means[y] + np.einsum("nij,nj->ni", rot[y], z)


# ------------------------------------------------------------------ the sets

S_SPREAD = {"s1": 0.025, "s2": 0.04, "s3": 0.055, "s4": 0.07}


def make_s(name: str) -> tuple[np.ndarray, np.ndarray]:
    """S-set ``s1`` .. ``s4``: 5000 points, 15 clusters, growing overlap."""
    rng = np.random.default_rng(SEED)
    means = separated_means(rng, 15, (0.1, 0.1), (0.9, 0.9), 0.15)
    scales = S_SPREAD[name] * rng.uniform(0.6, 1.4, size=(15, 2))
    y = even_labels(5000, 15, rng)
    X = gaussian_points(rng, means, scales, y)
    return 1e6 * X, 1e6 * means


A_CLUSTERS = {"a1": 20, "a2": 35, "a3": 50}


def make_a(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A-set ``a1``, ``a2`` or ``a3``: 150 points a cluster, nested means."""
    rng = np.random.default_rng(SEED)
    means = separated_means(rng, 20, (0.0, 0.0), (4.0, 5.0), 0.75)
    means = np.vstack([means, separated_means(rng, 15, (4.0, 0.0), (7.0, 5.0), 0.75, means)])
    means = np.vstack([means, separated_means(rng, 15, (7.0, 0.0), (10.0, 5.0), 0.75, means)])
    means = means[: A_CLUSTERS[name]]
    k = len(means)
    y = even_labels(150 * k, k, rng)
    X = gaussian_points(rng, means, np.full((k, 2), 0.16), y)
    return 6000 * X, 6000 * means


def make_birch1() -> tuple[np.ndarray, np.ndarray]:
    """Birch1-like: 100 clusters on a 10 x 10 grid, 1000 points each."""
    rng = np.random.default_rng(SEED)
    grid = np.arange(10) * 1e5
    means = np.stack(np.meshgrid(grid, grid), axis=-1).reshape(-1, 2)
    y = even_labels(100_000, 100, rng)
    X = gaussian_points(rng, means, np.full((100, 2), 1e5 / (4 * np.sqrt(2))), y)
    return X, means


def make_birch2() -> tuple[np.ndarray, np.ndarray]:
    """Birch2-like: 100 clusters along four periods of a sine, 1000 points each."""
    rng = np.random.default_rng(SEED)
    i = np.arange(100)
    means = np.stack([1e4 * i, 1e5 * np.sin(2 * np.pi * 4 * i / 100)], axis=1)
    y = even_labels(100_000, 100, rng)
    X = gaussian_points(rng, means, np.full((100, 2), 1e4 / (4 * np.sqrt(2))), y)
    return X, means


def label_means(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The mean of every label's rows, float64, labels ``0 .. max(y)``."""
    k = int(y.max()) + 1
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, y, X)
    return sums / np.bincount(y, minlength=k)[:, None]


def make_blob_set(n: int, d: int, k: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """``fastrbfkm.datasets.make_blobs`` (std 1, seed 0) and its label means."""
    X, y = make_blobs(n, centers=k, n_features=d, cluster_std=1.0, random_state=0, dtype=dtype)
    return X, label_means(X, y)


def make_digits() -> tuple[np.ndarray, np.ndarray]:
    """Standardized digits and the mean of every digit."""
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import StandardScaler

    digits = load_digits()
    X = StandardScaler().fit_transform(digits.data)
    return X, label_means(X, digits.target)


def _blob_set(name: str, n: int, d: int, k: int, dtype, separated: bool = True) -> BenchSet:
    return BenchSet(name, n, d, k, dtype, lambda: make_blob_set(n, d, k, dtype), separated)


def _registry() -> dict[str, BenchSet]:
    sets = [
        BenchSet(s, 5000, 2, 15, np.float64, lambda s=s: make_s(s), s in ("s1", "s2"), True)
        for s in S_SPREAD
    ]
    sets += [
        BenchSet(a, 150 * k, 2, k, np.float64, lambda a=a: make_a(a), classic=True)
        for a, k in A_CLUSTERS.items()
    ]
    sets += [
        BenchSet("birch1", 100_000, 2, 100, np.float64, make_birch1, classic=True),
        BenchSet("birch2", 100_000, 2, 100, np.float64, make_birch2, classic=True),
        _blob_set("demo", 1_000_000, 2, 8, np.float32, separated=False),
        _blob_set("blobs32", 200_000, 32, 64, np.float32),
        _blob_set("blobs16", 100_000, 16, 32, np.float64),
        BenchSet("digits", 1797, 64, 10, np.float64, make_digits, separated=False),
    ]
    return {s.name: s for s in sets}


SETS: dict[str, BenchSet] = _registry()


def choose(names: str | None, quick: bool) -> list[BenchSet]:
    """The sets named in a comma-separated list (all when ``None``); with
    ``quick``, only those under 100,000 rows."""
    if names:
        wanted = [name.strip() for name in names.split(",") if name.strip()]
        unknown = [name for name in wanted if name not in SETS]
        if unknown:
            raise ValueError(f"unknown sets {unknown}; choose from {', '.join(SETS)}")
        chosen = [SETS[name] for name in wanted]
    else:
        chosen = list(SETS.values())
    return [s for s in chosen if not (quick and s.large)]
