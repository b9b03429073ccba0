"""Principal axes over a rows source: per center, the largest eigenvalue of
its responsibility-weighted scatter and its unit eigenvector, and the data's
largest variance. They are algorithms over the passes of a source
(:class:`fastrbfkm._rows.Rows`), not passes themselves:

- up to ``DENSE_MAX`` features (and on every source that forms the scatter
  matrices, the GPU's among them), from the ``scatter`` pass's matrices
  (:func:`fastrbfkm._principal.dense_eigenpairs`);
- above it, on the sources whose passes are folds of block functions
  (:class:`fastrbfkm._rows.BlockRows`: in memory, streamed, Dask), by
  Lanczos iterations whose every step is one ``scatter_apply`` pass (no
  d x d matrix; :func:`fastrbfkm._principal.lanczos_eigenpairs`).
"""

from __future__ import annotations

import numpy as np

from . import _kernels as K
from ._principal import dense_eigenpairs, dense_values, lanczos_eigenpairs
from ._rows import BlockRows, CellSummary, Moments, Rows
from ._sphere import MIN_RESULTANT, mean_direction, tangent, tangent_scatter
from ._tunables import DENSE_MAX, LANCZOS_RTOL, LANCZOS_STEPS, ROUGH_STEPS


def principal(
    rows: Rows,
    C: np.ndarray,
    sigma: float,
    mode: int,
    cells: bool = False,
    rough: bool = False,
    rtol: float = LANCZOS_RTOL,
):
    """``(N, values, axes)``: per center, ``N_j`` of the ``scatter`` pass and
    the largest eigenvalue of ``A_j / N_j`` with its unit eigenvector. With
    ``cells``, a pair: that and the same for the hard cells of C (its
    Voronoi cells). With ``rough``, where they come from Lanczos iterations
    (above ``DENSE_MAX`` features), only ``ROUGH_STEPS`` of them: lower
    bounds of the eigenvalues and their Ritz vectors. ``rtol``: the
    Lanczos iterations' tolerance on the residual of a Ritz pair, relative
    to its value (:data:`~fastrbfkm._tunables.LANCZOS_RTOL`). On the sphere
    (``rows.sphere``, unit centers) the scatter is projected onto each
    center's tangent space first (:func:`fastrbfkm._sphere.tangent_scatter`):
    the axes lie along the sphere and the radial spread does not count."""
    if not forms_scatter(rows):
        return _lanczos(rows, C, sigma, mode, cells, rough, rtol)
    N, A = rows.scatter(C, sigma, mode)
    found = _from_scatter(rows, C, N, A)
    return (found, principal(rows, C, 0.0, K.HARD)) if cells else found


def forms_scatter(rows: Rows) -> bool:
    """Whether :func:`principal` forms the ``d x d`` scatter matrices on
    ``rows`` (else Lanczos iterations apply them, above ``DENSE_MAX``
    features on the sources of block folds)."""
    return not (isinstance(rows, BlockRows) and rows.d > DENSE_MAX)


def cell_axes(rows: Rows, C: np.ndarray, cells: CellSummary):
    """:func:`principal` of the hard cells of C (``rough``), from the
    scatter of ``cells`` (:meth:`fastrbfkm._rows.Rows.cell_summary`) when it
    holds one, with no pass over the rows."""
    if cells.scatter is None:
        return principal(rows, C, 0.0, K.HARD, rough=True)
    return _from_scatter(rows, C, cells.mass, cells.scatter)


def cell_spreads(rows: Rows, C: np.ndarray, cells: CellSummary):
    """``(N, values, axes_of)``: :func:`cell_axes`'s masses and principal
    variances, and ``axes_of(index)``, the unit principal axes of the cells
    ``index`` (``(len(index), d)``). From a formed scatter, the variances
    come without the eigenvectors and ``axes_of`` computes only those asked
    for: a swap round that moves a few dozen of a thousand cells does not
    pay for the rest's axes."""
    if cells.scatter is None:
        N, values, axes = cell_axes(rows, C, cells)
        return N, values, lambda index: axes[index]
    N, values_of, axes_of = _spreads_of(rows, C, cells.mass, cells.scatter)
    return N, values_of(), axes_of


def spreads_and_cells(rows: Rows, C: np.ndarray, sigma: float, mode: int):
    """``((N, values_of, axes_of), (N_cells, values_cells, axes_of_cells), S)``:
    :func:`principal`'s masses and largest eigenvalues at ``sigma`` and of
    the hard cells of C, from the scatter matrices of one pass
    (:meth:`~fastrbfkm._rows.Rows.scatter_and_cells`; sources that form
    them only: :func:`forms_scatter`), and the soft step's weighted sums
    ``S`` of that pass (None where it does not form them). The values come without the
    eigenvectors; ``axes_of(index)`` computes the unit principal axes of
    the centers ``index`` only (the annealing splits a few of its centers
    a temperature), and ``values_of(index)`` the soft largest eigenvalues
    of those centers only (the annealing ranks every cell, but needs the
    critical temperatures of the centers that would get a spare: at most
    as many as there are spares)."""
    N, S, A, N_cells, A_cells = rows.scatter_and_cells(C, sigma, mode)
    N, values_of, axes_of = _spreads_of(rows, C, N, A)
    N_cells, values_cells, axes_of_cells = _spreads_of(rows, C, N_cells, A_cells)
    return (N, values_of, axes_of), (N_cells, values_cells(), axes_of_cells), S


def _spreads_of(rows: Rows, C: np.ndarray, N: np.ndarray, A: np.ndarray):
    """``(N, values_of, axes_of)`` from the formed matrices ``(N, A)``:
    ``values_of(index)`` the largest eigenvalues (LAPACK's, a matrix at a
    time: the same for any ``index``; all of them without one) and
    ``axes_of(index)`` the unit axes of the centers ``index``."""
    if rows.sphere:
        A = tangent_scatter(A, C)

    def values_of(index: np.ndarray | slice = slice(None)) -> np.ndarray:
        return dense_values(N[index], A[index])

    def axes_of(index: np.ndarray) -> np.ndarray:
        return dense_eigenpairs(N[index], A[index])[1]

    return N, values_of, axes_of


def _from_scatter(rows: Rows, C: np.ndarray, N: np.ndarray, A: np.ndarray):
    """``(N, values, axes)`` from the formed scatter matrices (projected
    onto the sphere's tangent spaces first on the sphere)."""
    if rows.sphere:
        A = tangent_scatter(A, C)
    return (N, *dense_eigenpairs(N, A))


def _lanczos(
    rows: BlockRows, C: np.ndarray, sigma: float, mode: int, cells: bool, rough: bool, rtol: float
):
    """:func:`principal` by Lanczos iterations on the ``scatter_apply``
    passes, the cells' in the same passes."""
    k = C.shape[0]
    chosen = np.tile(np.arange(k), 2 if cells else 1)
    hard = np.arange(chosen.size) >= k if cells else np.full(k, mode == K.HARD)
    no_labels = np.empty(0, dtype=np.int32)
    labels = rows.cell_labels(C) if hard.all() else no_labels

    def apply(index, V):
        at = C[chosen[index]]  # on the sphere P A P v, P onto the tangent space at c
        if rows.sphere:
            V = tangent(V, at)
        N, U = rows.reduce("scatter_apply", C, sigma, mode, chosen[index], hard[index], V, labels)
        return N, tangent(U, at) if rows.sphere else U

    found = lanczos_eigenpairs(
        apply,
        chosen.size,
        rows.d,
        ROUGH_STEPS if rough else LANCZOS_STEPS,
        rtol,
    )
    if not cells:
        return found
    return tuple(part[:k] for part in found), tuple(part[k:] for part in found)


def largest_variance(rows: Rows, moments: Moments) -> float:
    """The largest eigenvalue of the covariance whose moments are given
    (``rows.moments()``): from the covariance, or above ``DENSE_MAX``
    features as the principal variance around the mean (:func:`principal`).

    On the sphere (``rows.sphere``), the largest variance along the sphere
    at the mean's direction ``c`` (the covariance projected onto the
    tangent space there) divided by the mean resultant length ``c . mean``:
    with it, the Euclidean ``critical_from_variance`` gives the sphere's
    critical temperature (the split's restoring term is ``c . x`` per row,
    not 1; ``docs/spherical.md``)."""
    if rows.sphere:
        c = mean_direction(moments.mean, moments.covariance)
        if moments.covariance is not None:
            P = tangent_scatter(moments.covariance[None], c[None])[0]
            lam = max(float(np.linalg.eigvalsh(P)[-1]), 0.0)
        else:
            lam = float(principal(rows, c[None, :].astype(rows.dtype), 0.0, K.HARD)[1][0])
        return lam / max(float(c @ moments.mean), MIN_RESULTANT)
    if moments.covariance is not None:
        return max(float(np.linalg.eigvalsh(moments.covariance)[-1]), 0.0)
    center = moments.mean[None, :].astype(rows.dtype)
    return float(principal(rows, center, 0.0, K.HARD)[1][0])
