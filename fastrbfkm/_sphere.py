"""The unit sphere, for ``metric="cosine"`` (spherical K-Means).

For unit rows ``x`` and unit centers ``c``, ``||x - c||^2 = 2 - 2 x.c``: the
squared distance every kernel computes is twice the cosine distance
``1 - x.c``. So the sphere needs no kernels of its own. The rows are made
unit length once, at the input door (a copy: the caller's data is never
modified); the centers are put back on the sphere after every update (the
weighted mean, normalised: :func:`project`); and the temperature at which a
center splits, which the annealing uses, is measured in the tangent space
(:func:`tangent_scatter`, divided by the cell's mean resultant length).

Everything else (assignments, soft responsibilities of ``-D / sigma``,
pruning bounds, seeding) works on the unit rows unchanged. The functions
are the ``"cosine"`` entry of :data:`fastrbfkm._model.METRICS`, which the
input door and the center updates call.
"""

from __future__ import annotations

import numpy as np

#: Smallest mean resultant length a critical temperature divides by: rows
#: whose directions cancel out split at any temperature, not at infinity.
MIN_RESULTANT = 1e-6


def unit_tensor(T, name: str):
    """The rows of a 2-D torch tensor scaled to unit length by differentiable
    torch ops; a row of zero length, or anything but a tensor, is refused.
    ``name``: the tensor's name in the errors."""
    import torch

    if not isinstance(T, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor; got {type(T).__name__}.")
    if T.ndim == 2 and bool((T.detach().abs().amax(dim=1) == 0).any()):
        raise ValueError(
            f"{name} has a row of zero length: metric='cosine' needs a direction for every row."
        )
    return torch.nn.functional.normalize(T, dim=1)


def _zero_row_error(index: int) -> ValueError:
    return ValueError(
        f"X has a row of zero length (row {index}): metric='cosine' needs a direction "
        "for every row. Drop such rows, or use metric='euclidean'."
    )


def unit_dense(X: np.ndarray) -> np.ndarray:
    """A copy of the rows of X (float32 or float64) at unit length
    (:func:`to_unit`)."""
    return to_unit(np.array(X, order="C", copy=True))


def to_unit(Y: np.ndarray, offset: int = 0) -> np.ndarray:
    """The rows of Y (float32 or float64) scaled to unit length in place;
    returns Y. ``offset``: Y's first row's index in the data, for the error
    on a zero row.

    Each row is first divided by its largest magnitude, so that neither
    huge nor tiny coordinates overflow or underflow when squared."""
    scale = np.abs(Y).max(axis=1) if Y.shape[1] else np.zeros(Y.shape[0], Y.dtype)
    if not np.isfinite(scale).all():
        raise ValueError("X contains NaN or infinity.")
    zero = np.flatnonzero(~(scale > 0))
    if zero.size:
        raise _zero_row_error(offset + int(zero[0]))
    Y /= scale[:, None]
    Y /= np.sqrt(np.einsum("ij,ij->i", Y, Y, dtype=np.float64)).astype(Y.dtype)[:, None]
    return Y


def unit_csr(X):
    """A copy of a :class:`fastrbfkm._kernels.CSR` with unit rows (same
    pattern; the arithmetic of :func:`unit_dense`, over the nonzeros)."""
    from ._kernels import CSR

    n = X.indptr.shape[0] - 1
    lengths = np.diff(X.indptr)
    start = X.indptr[0]
    data = X.data[start : X.indptr[-1]]
    row = np.repeat(np.arange(n), lengths)
    scale = np.zeros(n, dtype=X.data.dtype)
    np.maximum.at(scale, row, np.abs(data))
    zero = np.flatnonzero(~(scale > 0))
    if zero.size:
        raise _zero_row_error(int(zero[0]))
    if not np.isfinite(scale).all():
        raise ValueError("X contains NaN or infinity.")
    scaled = data / scale[row]
    norms = np.zeros(n)
    np.add.at(norms, row, scaled.astype(np.float64) ** 2)
    scaled /= np.sqrt(norms).astype(X.data.dtype)[row]
    return CSR(
        np.ascontiguousarray(scaled),
        np.ascontiguousarray(X.indices[start : X.indptr[-1]]),
        X.indptr - start,
        X.n_cols,
    )


def unit_dask(X):
    """X (a checked dask array, one chunk of features) with unit rows,
    lazily; a zero row raises when its chunk is computed."""

    def normalise(block):
        return unit_dense(block) if block.shape[0] else block

    return X.map_blocks(normalise, dtype=X.dtype)


def project(C: np.ndarray, old: np.ndarray | None = None) -> np.ndarray:
    """The rows of C scaled to unit length (float64 arithmetic, C's dtype).

    A row of zero length (a cell whose mean is the origin: its rows cancel
    out) has no direction: it keeps the matching row of ``old``, or where
    none is given the first coordinate axis."""
    C64 = np.asarray(C, dtype=np.float64)
    scale = np.abs(C64).max(axis=1, initial=0.0)
    out = np.zeros_like(C64)
    alive = scale > 0
    Y = C64[alive] / scale[alive, None]
    out[alive] = Y / np.linalg.norm(Y, axis=1)[:, None]
    if not alive.all():
        if old is not None:
            out[~alive] = old[~alive]
        else:
            out[~alive, 0] = 1.0
    return out.astype(C.dtype, copy=False)


def given_centers(C: np.ndarray) -> np.ndarray:
    """Centers given by the caller, projected (:func:`project`); a center of
    zero length, which has no direction, is refused."""
    zero = np.flatnonzero(~(np.abs(C).max(axis=1, initial=0.0) > 0))
    if zero.size:
        raise ValueError(
            f"C has a center of zero length (row {int(zero[0])}): metric='cosine' "
            "needs a direction for every center."
        )
    return project(C)


def mean_direction(mean: np.ndarray, covariance: np.ndarray | None) -> np.ndarray:
    """The unit vector of the data's (weighted) mean; for data whose mean is
    the origin, the axis of largest variance (or the first coordinate)."""
    if np.abs(mean).max(initial=0.0) > 0:
        return project(mean[None, :])[0]
    axis = np.zeros_like(mean)
    axis[int(np.argmax(np.diag(covariance))) if covariance is not None else 0] = 1.0
    return axis


def tangent_scatter(A: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``P_j A_j P_j`` for each ``(d, d)`` matrix ``A_j`` and unit center
    ``c_j``, with ``P_j = I - c_j c_j^T`` the projection onto the sphere's
    tangent space at ``c_j``."""
    C = np.asarray(C, dtype=np.float64)
    Ac = np.einsum("jab,jb->ja", A, C)
    cAc = np.einsum("ja,ja->j", C, Ac)
    return (
        A
        - C[:, :, None] * Ac[:, None, :]
        - Ac[:, :, None] * C[:, None, :]
        + cAc[:, None, None] * C[:, :, None] * C[:, None, :]
    )


def tangent(V: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Each row ``v_g`` of V less its component along the unit ``c_g``."""
    C = np.asarray(C, dtype=np.float64)
    return V - np.einsum("ga,ga->g", V, C)[:, None] * C


def resultant(C: np.ndarray, N: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Each cell's mean resultant length along its unit center,
    ``c_j . S_j / N_j``, at least :data:`MIN_RESULTANT`."""
    out = np.full(C.shape[0], MIN_RESULTANT)
    alive = N > 0
    out[alive] = np.einsum("ja,ja->j", np.asarray(C, np.float64)[alive], S[alive]) / N[alive]
    return np.maximum(out, MIN_RESULTANT)
