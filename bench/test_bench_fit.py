"""pytest-benchmark suite for the estimator and the remaining kernels:
``pytest bench/ --benchmark-only``."""

import numpy as np
import pytest

import fastrbfkm as fk
from fastrbfkm import RBFKMeans
from fastrbfkm.datasets import make_blobs


@pytest.fixture(scope="module")
def blobs():
    X, _ = make_blobs(50_000, n_features=8, centers=8, random_state=0, dtype=np.float32)
    return X


@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_fit(benchmark, blobs, assignment):
    """A whole fit with the defaults (annealing for the soft assignments)."""
    benchmark.pedantic(
        lambda: RBFKMeans(8, assignment=assignment, random_state=0).fit(blobs),
        rounds=3,
        iterations=1,
    )


def test_kmeans_plusplus(benchmark, blobs):
    benchmark(fk.kmeans_plusplus, blobs, 8, random_state=0)


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_responsibilities_and_backward(benchmark, problem, assignment):
    X, C = problem
    R = fk.responsibilities(X, C, 1.0, assignment)
    G = np.ones_like(R)
    backward = getattr(fk, f"{assignment}_backward")
    benchmark(lambda: backward(fk.responsibilities(X, C, 1.0, assignment), G))
