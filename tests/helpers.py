"""Shared test helpers."""

import numpy as np

DTYPES = [np.float32, np.float64]


def make_problem(n, d, k, dtype=np.float64, seed=0, offset=0.0):
    """Gaussian data and centers drawn near data points."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + offset
    C = X[rng.integers(0, n, size=k)] + 0.1 * rng.normal(size=(k, d))
    w = rng.uniform(0.1, 2.0, size=n)
    return X.astype(dtype), C.astype(dtype), w


def tolerance(dtype):
    """Relative tolerance for results computed in ``dtype``."""
    return 2e-4 if dtype == np.float32 else 1e-10
