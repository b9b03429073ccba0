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


def _noisy(X: np.ndarray, noise: float, rng: np.random.Generator, dtype) -> np.ndarray:
    if noise:
        X = X + noise * rng.standard_normal(X.shape)
    return X.astype(dtype, copy=False)


def make_moons(
    n_samples: int = 1000,
    noise: float = 0.05,
    random_state: int | None = None,
    dtype=np.float64,
) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, split as evenly as possible between the moons.
    noise : float, default=0.05
        Standard deviation of the Gaussian noise added to every coordinate.
    random_state : int or None, default=None
        Seed of the generator.
    dtype : numpy float dtype, default=numpy.float64
        Dtype of the points.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The points.
    y : ndarray of shape (n_samples,)
        The moon of every point (0 or 1).
    """
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % 2
    t = rng.uniform(0.0, np.pi, n_samples)
    X = np.where(
        y[:, None] == 0,
        np.c_[np.cos(t), np.sin(t)],
        np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)],
    )
    return _noisy(X, noise, rng, dtype), y


def make_spiral(
    n_samples: int = 1000,
    arms: int = 2,
    turns: float = 1.5,
    noise: float = 0.05,
    random_state: int | None = None,
    dtype=np.float64,
) -> tuple[np.ndarray, np.ndarray]:
    """Interleaved Archimedean spiral arms.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, split as evenly as possible among the arms.
    arms : int, default=2
        Number of arms, rotated evenly around the origin.
    turns : float, default=1.5
        Turns of every arm.
    noise : float, default=0.05
        Standard deviation of the Gaussian noise, relative to the outer radius 1.
    random_state : int or None, default=None
        Seed of the generator.
    dtype : numpy float dtype, default=numpy.float64
        Dtype of the points.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The points.
    y : ndarray of shape (n_samples,)
        The arm of every point.
    """
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % arms
    r = np.sqrt(rng.uniform(0.0, 1.0, n_samples))  # uniform density along the area
    angle = 2 * np.pi * (turns * r + y / arms)
    X = np.c_[r * np.cos(angle), r * np.sin(angle)]
    return _noisy(X, noise, rng, dtype), y


def make_circles(
    n_samples: int = 1000,
    factor: float = 0.5,
    noise: float = 0.05,
    random_state: int | None = None,
    dtype=np.float64,
) -> tuple[np.ndarray, np.ndarray]:
    """Two concentric circles.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of points, split as evenly as possible between the circles.
    factor : float, default=0.5
        Radius of the inner circle (the outer one has radius 1).
    noise : float, default=0.05
        Standard deviation of the Gaussian noise added to every coordinate.
    random_state : int or None, default=None
        Seed of the generator.
    dtype : numpy float dtype, default=numpy.float64
        Dtype of the points.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
        The points.
    y : ndarray of shape (n_samples,)
        0 for the outer circle, 1 for the inner one.
    """
    rng = np.random.default_rng(random_state)
    y = np.arange(n_samples) % 2
    t = rng.uniform(0.0, 2 * np.pi, n_samples)
    radius = np.where(y == 0, 1.0, factor)
    X = radius[:, None] * np.c_[np.cos(t), np.sin(t)]
    return _noisy(X, noise, rng, dtype), y
