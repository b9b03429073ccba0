"""The largest principal variance and axis of the data around each center.

Annealing needs, per center j, the largest eigenpair of ``A_j / N_j``, the
responsibility-weighted scatter of :mod:`fastrbfkm._kernels.scatter` (its
critical temperature and the axis a spare center splits off along), and a
fit needs the largest eigenvalue of the data's covariance (the same with one
center on the mean and hard responsibilities).

Up to :data:`DENSE_MAX` features the ``d x d`` matrices are formed in one
pass and handed to LAPACK. Above it they would not fit (d = 100000 is 80 GB
per matrix), so the eigenpairs come from Lanczos iterations on the products
``A_j v`` (:func:`fastrbfkm._kernels.scatter_apply`), one pass over X per
iteration for all centers together: memory ``O(q k d)`` for ``q <=``
:data:`LANCZOS_STEPS` basis vectors per center, in groups of centers that
keep the basis within :data:`BASIS_BUDGET` floats.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._tunables import BASIS_BUDGET, LANCZOS_RTOL, LANCZOS_STEPS


def signed(axes: np.ndarray) -> np.ndarray:
    """Unit axes ``(m, d)`` with a sign that does not depend on rounding: the
    entry of largest magnitude (the first of equals) made positive, in place.

    An eigenvector's sign is arbitrary, and the last bits of the matrix decide
    which one LAPACK or Lanczos returns: a split along it would otherwise go
    one way on dense rows and the other on the same rows as CSR."""
    if axes.size:
        lead = np.take_along_axis(axes, np.abs(axes).argmax(axis=1)[:, None], axis=1)
        axes *= np.where(lead < 0, -1.0, 1.0)
    return axes


def dense_eigenpairs(N: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(values, axes)``: the largest eigenvalue of ``A[g] / N[g]`` (at
    least 0) and its unit eigenvector (:func:`signed`); zeros where ``N[g] = 0``."""
    m, d = A.shape[:2]
    values = np.zeros(m)
    axes = np.zeros((m, d))
    alive = np.flatnonzero(N > 0)
    if alive.size:
        # one call over the stack: LAPACK per matrix, as one call each
        lam, vectors = np.linalg.eigh(A[alive] / N[alive, None, None])
        values[alive] = np.maximum(lam[:, -1], 0.0)
        axes[alive] = vectors[:, :, -1]
    return values, signed(axes)


def dense_values(N: np.ndarray, A: np.ndarray) -> np.ndarray:
    """The largest eigenvalue of ``A[g] / N[g]`` (at least 0; zero where
    ``N[g] = 0``) without the eigenvectors: about a third of
    :func:`dense_eigenpairs`'s time (LAPACK's ``syevd`` without vectors),
    for callers that need the axes of a few matrices only."""
    values = np.zeros(A.shape[0])
    alive = np.flatnonzero(N > 0)
    if alive.size:
        values[alive] = np.maximum(np.linalg.eigvalsh(A[alive] / N[alive, None, None])[:, -1], 0.0)
    return values


def lanczos_eigenpairs(
    apply: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
    m: int,
    d: int,
    steps: int = LANCZOS_STEPS,
    rtol: float = LANCZOS_RTOL,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(N, values, axes)`` as :func:`dense_eigenpairs` from products only.

    ``apply(index, V)`` returns ``(N, U)`` with ``U[g] = A_j V[g]`` for the
    centers ``j = index[g]`` (one pass over X). Every center runs its own
    Lanczos recurrence with full reorthogonalization, all in lock step from
    the same fixed start vector (results do not depend on a random state),
    until the residual of its largest Ritz pair is within
    ``rtol`` (:data:`LANCZOS_RTOL`) of its value, its Krylov space is exhausted, or
    after ``steps`` steps (:data:`LANCZOS_STEPS`; :data:`ROUGH_STEPS` for a
    rough estimate). The Ritz value never exceeds the
    eigenvalue; on spectra without a gap at the top (noise) it may stop
    short of it by a little, and the axis is then a mixture of the leading
    directions.
    """
    steps = min(d, steps)
    start = np.random.default_rng(0).standard_normal(d)
    start /= np.linalg.norm(start)
    N = np.zeros(m)
    values = np.zeros(m)
    axes = np.zeros((m, d))
    group = max(1, BASIS_BUDGET // ((steps + 1) * d))
    for first in range(0, m, group):
        index = np.arange(first, min(m, first + group))
        N[index], values[index], axes[index] = _lanczos_group(apply, index, start, steps, rtol)
    return N, values, signed(axes)


def _lanczos_group(apply, index, start, steps, rtol):
    """:func:`lanczos_eigenpairs` for the centers ``index``."""
    g, d = index.size, start.size
    Q = np.zeros((g, steps + 1, d))
    Q[:, 0] = start
    T = np.zeros((g, steps, steps))  # the tridiagonal Lanczos matrices
    N = np.zeros(g)
    values = np.zeros(g)
    axes = np.zeros((g, d))
    running = np.ones(g, dtype=bool)
    for j in range(steps):
        live = np.flatnonzero(running)
        counts, U = apply(index[live], Q[live, j])
        if j == 0:
            N[live] = counts
        for r, c in enumerate(live):
            if N[c] <= 0:  # a center without mass has no spread
                running[c] = False
                continue
            basis = Q[c, : j + 1]
            w = U[r] / N[c]
            T[c, j, j] = w @ basis[j]
            for _ in range(2):  # full reorthogonalization (twice is enough)
                w -= (basis @ w) @ basis
            beta = float(np.linalg.norm(w))
            lam, Y = np.linalg.eigh(T[c, : j + 1, : j + 1])
            values[c] = max(lam[-1], 0.0)
            scale = max(abs(lam[-1]), abs(lam[0]))
            converged = beta * abs(Y[-1, -1]) <= rtol * scale
            # converged, the Krylov space exhausted, or the last step
            if converged or beta <= 1e-14 * scale or j + 1 == steps:
                running[c] = False
                axes[c] = Y[:, -1] @ basis  # the Ritz vector, once
            else:
                Q[c, j + 1] = w / beta
                T[c, j, j + 1] = T[c, j + 1, j] = beta
        if not running.any():
            break
    return N, values, axes
