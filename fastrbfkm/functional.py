"""The functional API: distances, assignments, the free energy, its gradient
and the (soft) Lloyd step.

Every function but the backward passes takes ``backend`` (``"auto"``,
``"cpu"``, ``"cuda"``) and hands its data to the same door as the estimator
(:func:`fastrbfkm._backend.open_rows`; logits, for ``softmax`` and
``entmax15``, to :func:`fastrbfkm._backend.assign_logits`): on the GPU, numpy input gives numpy
results and CUDA array input (numba device arrays, CuPy, PyTorch CUDA
tensors) gives numba device arrays, scalars staying host floats. A dask
array is read chunk by chunk: per-row results (distances,
responsibilities) are lazy dask arrays, sums and scalars are computed.

Conventions: ``D[i, k] = ||x_i - c_k||^2``, logits
``Z = -D / sigma`` with ``sigma`` in units of squared distance, and the free
energy ``F_sigma(C) = sum_i w_i [sum_k r_ik D_ik - sigma H(r_i)]``, which
Gamma-converges to the K-Means inertia as ``sigma -> 0``. ``sigma = 0`` is
accepted everywhere and means the hard limit (one-hot at the nearest center,
ties to the lowest index).
"""

from __future__ import annotations

import numpy as np

from . import _kernels as K
from ._backend import assign_logits, open_rows
from ._deprecation import keyword_only
from ._model import metric_of
from ._rows import HostRows, Rows
from ._sphere import tangent
from ._threads import one_blas_thread
from ._validation import (
    as_float_array,
    check_assignment,
    check_lr,
    check_sigma,
    check_value_range,
    smallest_magnitude,
)

__all__ = [
    "entmax15",
    "entmax15_backward",
    "gradient",
    "objective",
    "responsibilities",
    "softmax",
    "softmax_backward",
    "squared_distances",
    "step",
    "sufficient_statistics",
]


@keyword_only
@one_blas_thread
def squared_distances(X, C, *, backend: str = "auto", metric: str = "euclidean") -> np.ndarray:
    """Squared Euclidean distances between the rows of X and the centers.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n, d)
        Data points (a CUDA array too, see ``backend``).
    C : array-like of shape (k, d)
        Centers.
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where to compute: ``"auto"`` uses the GPU for CUDA array input and
        for large enough data when a GPU is available, else the CPU.
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: on the unit sphere. The rows of X and of C are used at
        unit length (copies), so ``D = 2 - 2 x.c`` (twice the cosine
        distance) and the logits ``-D / sigma`` are those of von Mises-Fisher
        kernels of concentration ``2 / sigma``.

    Returns
    -------
    D : ndarray of shape (n, k)
        ``D[i, k] = ||X[i] - C[k]||^2``, never negative, in X's float dtype
        (float32 stays float32; integers become float64). A numba device
        array when X is a CUDA array.
    """
    rows, C = _open(X, C, None, backend, metric)
    return rows.squared_distances(C)


def _open(X, C, sample_weight, backend, metric="euclidean") -> tuple[Rows, np.ndarray]:
    """X and its weights as a rows source (the one door), and C checked
    against it (on the sphere, a copy of C with unit rows)."""
    rows = open_rows(X, sample_weight, backend, centers=C, metric=metric)
    C = rows.check_centers(C)
    C = rows.metric.given(C)
    # Data and centers all below the square root of the smallest normal
    # number: every squared distance underflows, as the fits refuse.
    # (Checked where X is at hand: the other sources read no values for it.)
    tiny = float(np.abs(C).max(initial=0.0)) < smallest_magnitude(rows.dtype)
    if tiny and isinstance(rows, HostRows):
        largest = rows.largest_magnitude()
        check_value_range(-largest, largest, "X", rows.dtype, C, True, fitting=True)
    return rows, C


def _assign_logits(Z, mode: int, backend) -> np.ndarray:
    """Row-wise ``mode`` of the logits Z over their last axis, Z's shape."""
    return assign_logits(Z, mode, backend)


def _logits(Z, name: str = "Z") -> tuple[np.ndarray, tuple[int, ...]]:
    Z = as_float_array(Z, name, ndim=(1, 2))
    return Z.reshape(-1, Z.shape[-1]), Z.shape


@keyword_only
@one_blas_thread
def softmax(Z, *, backend: str = "auto") -> np.ndarray:
    """Row-wise softmax of logits, stable for any finite input.

    Parameters
    ----------
    Z : array-like of shape (n, k) or (k,)
        Logits; the softmax is taken over the last axis.
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where to compute; ``"auto"`` uses the GPU for CUDA array input only.

    Returns
    -------
    R : ndarray of the same shape
        ``exp(Z - max Z) / sum exp(Z - max Z)`` row by row, in Z's float dtype
        (a numba device array for CUDA array input).
    """
    return _assign_logits(Z, K.SOFTMAX, backend)


@keyword_only
@one_blas_thread
def entmax15(Z, *, backend: str = "auto") -> np.ndarray:
    """Row-wise Entmax-1.5 of logits (exact: the closed-form threshold on a certified support).

    Parameters
    ----------
    Z : array-like of shape (n, k) or (k,)
        Logits; entmax is taken over the last axis.
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where to compute; ``"auto"`` uses the GPU for CUDA array input only.

    Returns
    -------
    R : ndarray of the same shape
        ``[Z / 2 - tau]_+^2`` with ``tau`` making each row sum to 1; sparse
        (exact zeros for logits more than 2 below the row's maximum, and
        often for others). Z's float dtype (a numba device array for CUDA
        array input).
    """
    return _assign_logits(Z, K.ENTMAX15, backend)


def _backward(R, G) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    R2, shape = _logits(R, "R")
    G2 = as_float_array(G, "G", ndim=(1, 2), dtype=R2.dtype)
    if G2.shape != shape:
        raise ValueError(f"G must have the shape of R {shape}; got {G2.shape}.")
    if R2.min() < 0 or not np.all(R2.sum(axis=1) > 0):
        raise ValueError("R must be non-negative with a positive sum in every row.")
    # The Jacobians are those of the maps onto the simplex, at their output.
    eps = float(np.finfo(R2.dtype).eps)
    tol = max(np.sqrt(eps), 16.0 * R2.shape[1] * eps)
    off = np.abs(R2.sum(axis=1, dtype=np.float64) - 1.0)
    if not np.all(off <= tol):
        i = int(np.argmax(~(off <= tol)))
        raise ValueError(
            f"R must be a distribution in every row (the output of softmax or entmax15: "
            f"non-negative, summing to 1); row {i} sums to {R2[i].sum(dtype=np.float64)!r}."
        )
    return R2, G2.reshape(R2.shape), shape


@one_blas_thread
def softmax_backward(R, G) -> np.ndarray:
    """Vector-Jacobian product of :func:`softmax` at its output.

    Parameters
    ----------
    R : array-like of shape (n, k) or (k,)
        ``softmax(Z)``.
    G : array-like of the same shape
        Gradient of a loss with respect to R.

    Returns
    -------
    GZ : ndarray of the same shape
        Gradient with respect to Z: ``R * (G - sum(R * G))`` row by row.
    """
    R2, G2, shape = _backward(R, G)
    return K.softmax_backward(R2, G2).reshape(shape)


@one_blas_thread
def entmax15_backward(R, G) -> np.ndarray:
    """Vector-Jacobian product of :func:`entmax15` at its output.

    Parameters
    ----------
    R : array-like of shape (n, k) or (k,)
        ``entmax15(Z)``.
    G : array-like of the same shape
        Gradient of a loss with respect to R.

    Returns
    -------
    GZ : ndarray of the same shape
        Gradient with respect to Z: with ``q = sqrt(R)`` (zero off the
        support), ``q * G - q * sum(q * G) / sum(q)`` row by row.
    """
    R2, G2, shape = _backward(R, G)
    return K.entmax15_backward(R2, G2).reshape(shape)


@keyword_only
@one_blas_thread
def responsibilities(
    X,
    C,
    sigma: float,
    assignment: str = "entmax15",
    *,
    backend: str = "auto",
    metric: str = "euclidean",
) -> np.ndarray:
    """Responsibilities of the centers for every point at temperature sigma.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n, d)
        Data points.
    C : array-like of shape (k, d)
        Centers.
    sigma : float
        Temperature, >= 0, in units of squared distance; the logits are
        ``-D / sigma``. ``0`` is the hard limit.
    assignment : {"entmax15", "softmax", "hard"}, default="entmax15"
        How a row of logits becomes a distribution.
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where to compute, as in :func:`squared_distances`.
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: on the unit sphere. The rows of X and of C are used at
        unit length (copies), so ``D = 2 - 2 x.c`` (twice the cosine
        distance) and the logits ``-D / sigma`` are those of von Mises-Fisher
        kernels of concentration ``2 / sigma``.

    Returns
    -------
    R : ndarray of shape (n, k)
        Rows are non-negative and sum to 1, in X's float dtype (a numba
        device array when X is a CUDA array).
    """
    mode = check_assignment(assignment)
    sigma = check_sigma(sigma)
    rows, C = _open(X, C, None, backend, metric)
    return rows.responsibilities(C, sigma, mode)


@keyword_only
@one_blas_thread
def sufficient_statistics(
    X,
    C,
    sigma: float,
    assignment: str = "entmax15",
    *,
    sample_weight=None,
    backend: str = "auto",
    metric: str = "euclidean",
) -> tuple[np.ndarray, np.ndarray, float]:
    """Weighted sufficient statistics of the assignment, in one fused pass.

    Parameters
    ----------
    X, C, sigma, assignment, sample_weight, backend, metric
        As in :func:`objective`.

    Returns
    -------
    N : ndarray of shape (k,), float64
        Mass of every center, ``N_k = sum_i w_i r_ik``.
    S : ndarray of shape (k, d), float64
        Weighted sums ``S_k = sum_i w_i r_ik x_i``; the weighted means are
        ``m_k = S_k / N_k``. N and S are numba device arrays when X is a
        CUDA array.
    F : float
        The free energy ``F_sigma(C)``.
    """
    N, S, summary, _, out = _statistics(
        X, C, sigma, assignment, sample_weight, backend, metric=metric
    )
    return out(N), out(S), float(summary[K.OBJECTIVE])


@keyword_only
@one_blas_thread
def objective(
    X,
    C,
    sigma: float,
    assignment: str = "entmax15",
    *,
    sample_weight=None,
    backend: str = "auto",
    metric: str = "euclidean",
) -> float:
    """The free energy ``F_sigma(C)`` of the centers.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n, d)
        Data points.
    C : array-like of shape (k, d)
        Centers.
    sigma : float
        Temperature, >= 0. At ``0`` the value is the K-Means inertia
        ``sum_i w_i min_k D_ik`` for every assignment.
    assignment : {"entmax15", "softmax", "hard"}, default="entmax15"
        The assignment and its entropy: Shannon for softmax (the value is
        ``-sigma sum_i w_i log sum_k exp(-D_ik / sigma)``, computed stably),
        Tsallis-1.5 for entmax15, none for hard (the inertia at any sigma).
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights with a positive sum; None means all ones.
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where to compute: ``"auto"`` uses the GPU for CUDA array input and
        for large enough data when a GPU is available, else the CPU.
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: on the unit sphere. The rows of X and of C are used at
        unit length (copies), so ``D = 2 - 2 x.c`` (twice the cosine
        distance) and the logits ``-D / sigma`` are those of von Mises-Fisher
        kernels of concentration ``2 / sigma``.

    Returns
    -------
    F : float
        ``sum_i w_i [sum_k r_ik D_ik - sigma H(r_i)]``, accumulated in float64.
    """
    _, _, summary, _, _ = _statistics(
        X, C, sigma, assignment, sample_weight, backend, with_stats=False, metric=metric
    )
    return float(summary[K.OBJECTIVE])


@keyword_only
@one_blas_thread
def gradient(
    X,
    C,
    sigma: float,
    assignment: str = "entmax15",
    *,
    sample_weight=None,
    backend: str = "auto",
    metric: str = "euclidean",
) -> np.ndarray:
    """Gradient of :func:`objective` with respect to the centers.

    Parameters
    ----------
    X, C, sigma, assignment, sample_weight, backend, metric
        As in :func:`objective`.

    Returns
    -------
    G : ndarray of shape (k, d)
        ``dF/dc_k = 2 (N_k c_k - S_k) = 2 N_k (c_k - m_k)`` (the envelope
        theorem: the assignment minimizes each row's energy), in X's dtype
        (a numba device array when X is a CUDA array). With
        ``metric="cosine"``, the gradient along the sphere: that vector less
        its component along the unit ``c_k``, ``-2 (S_k - (c_k . S_k) c_k)``.
    """
    N, S, _, C, out = _statistics(X, C, sigma, assignment, sample_weight, backend, metric=metric)
    G = 2.0 * (N[:, None] * C - S)
    if metric_of(metric).sphere:
        G = tangent(G, C)
    return out(G.astype(C.dtype, copy=False))


@keyword_only
@one_blas_thread
def step(
    X,
    C,
    sigma: float,
    assignment: str = "entmax15",
    *,
    sample_weight=None,
    lr: float | None = None,
    backend: str = "auto",
    metric: str = "euclidean",
) -> np.ndarray:
    """One gradient step on the centers.

    Parameters
    ----------
    X, C, sigma, assignment, sample_weight, backend, metric
        As in :func:`objective`.
    lr : float, default=None
        None uses the per-center rate ``eta_k = 1 / (2 N_k)``, which moves
        every center to its weighted mean ``m_k``: the soft Lloyd update, and
        exactly one Lloyd iteration with ``assignment="hard"`` (or
        ``sigma=0``). A float is a plain gradient-descent rate,
        ``C - lr * gradient``. With ``metric="cosine"`` the result is scaled
        back to the unit sphere: the weighted mean's direction (spherical
        K-Means's update), or the step along the sphere's gradient.

    Returns
    -------
    C_new : ndarray of shape (k, d)
        The new centers, in X's dtype (a numba device array when X is a CUDA
        array). A center with zero mass stays where it is.
    """
    lr = check_lr(lr)
    N, S, _, C, out = _statistics(X, C, sigma, assignment, sample_weight, backend, metric=metric)
    if lr is None:
        new = C.astype(np.float64)
        alive = N > 0
        new[alive] = S[alive] / N[alive, None]
    else:
        G = 2.0 * (N[:, None] * C - S)
        new = C - lr * (tangent(G, C) if metric_of(metric).sphere else G)
    new = metric_of(metric).centers(new, C)
    return out(new.astype(C.dtype, copy=False))


def _statistics(
    X, C, sigma, assignment, sample_weight, backend, with_stats=True, metric="euclidean"
):
    """``(N, S, summary, C, out)`` of the fused pass on the chosen backend:
    float64 host statistics, the validated centers in X's dtype, and ``out``,
    which puts a small result where X came from."""
    mode = check_assignment(assignment)
    sigma = check_sigma(sigma)
    rows, C = _open(X, C, sample_weight, backend, metric)
    N, S, summary = rows.stats(C, sigma, mode, with_stats)
    return N, S, summary, C, rows.like_input
