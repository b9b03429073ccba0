"""Seeded synthetic datasets (numpy only)."""

from __future__ import annotations

import numpy as np


def make_blobs(
    n_samples: int = 1000,
    centers: int = 8,
    n_features: int = 2,
    cluster_std: float = 1.0,
    center_box: float = 10.0,
    random_state: int | None = None,
    dtype=np.float64,
) -> tuple[np.ndarray, np.ndarray]:
    """Isotropic Gaussian blobs.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, split as evenly as possible among the blobs.
    centers : int, default=8
        Number of blobs.
    n_features : int, default=2
        Dimension of the points.
    cluster_std : float, default=1.0
        Standard deviation of every blob.
    center_box : float, default=10.0
        Blob centers are drawn uniformly from ``[-center_box, center_box]^d``.
    random_state : int or None, default=None
        Seed of the generator.
    dtype : numpy float dtype, default=numpy.float64
        Dtype of the points.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The points.
    y : ndarray of shape (n_samples,)
        The blob of every point.
    """
    rng = np.random.default_rng(random_state)
    means = rng.uniform(-center_box, center_box, size=(centers, n_features))
    y = np.arange(n_samples) % centers
    rng.shuffle(y)
    X = means[y] + cluster_std * rng.standard_normal((n_samples, n_features))
    return X.astype(dtype, copy=False), y
