"""pytest-benchmark suite for the kernels: ``pytest bench/ --benchmark-only``.

Each kernel is timed next to one ``X @ C.T`` GEMM on the same data, the
machine's limit for large ``d * k``.
"""

import numpy as np
import pytest

import fastrbfkm as fk

SIGMA = 1.0


def test_gemm(benchmark, problem):
    X, C = problem
    benchmark(np.matmul, X, C.T)


def test_squared_distances(benchmark, problem):
    X, C = problem
    benchmark(fk.squared_distances, X, C)


@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_objective(benchmark, problem, assignment):
    X, C = problem
    benchmark(fk.objective, X, C, SIGMA, assignment)


@pytest.mark.parametrize("assignment", ["hard", "softmax", "entmax15"])
def test_sufficient_statistics(benchmark, problem, assignment):
    X, C = problem
    benchmark(fk.sufficient_statistics, X, C, SIGMA, assignment)


@pytest.mark.parametrize("assignment", ["softmax", "entmax15"])
def test_logits(benchmark, assignment):
    Z = np.random.default_rng(0).normal(size=(200_000, 64)).astype(np.float32)
    benchmark(getattr(fk, assignment), Z)
