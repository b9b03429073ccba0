"""Shapes shared by the benchmark suites: the three (n, d, k) of the peer
comparison in compare-2core.md."""

import numpy as np
import pytest

SHAPES = [(200_000, 32, 64), (1_000_000, 2, 8), (50_000, 128, 1024)]


@pytest.fixture(params=SHAPES, ids=lambda s: "x".join(map(str, s)), scope="module")
def problem(request):
    n, d, k = request.param
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)).astype(np.float32)
    C = X[rng.choice(n, size=k, replace=False)].copy()
    return X, C
