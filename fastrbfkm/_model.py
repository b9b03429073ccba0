"""The model: which assignment maps a row's distances to responsibilities,
and which metric measures them.

Each is one small frozen value, registered by its public name in one table
(:data:`ASSIGNMENTS`, :data:`METRICS`). The estimators' parameter
constraints, the command line's choices, the torch layer and the argument
checks read the tables, so a name is accepted exactly where it is
registered. Kernels receive the assignment's integer ``code`` and switch on
it with one explicit branch per code (no catch-all: an unregistered code
gives NaN responsibilities, never another assignment's); the Python side
turns a code back into its entry with :func:`assignment_of`, which refuses
a code that is not registered.

docs/conventions.md ("Adding an assignment") lists what a new assignment
touches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import _sphere
from ._tunables import SOFTMAX_HARD_TOL

# The kernels' codes (fastrbfkm._kernels.assignment: HARD, SOFTMAX,
# ENTMAX15), restated here because this table is read where numba must not
# be loaded (the command line's --help); tests/test_model.py checks that
# they agree.
_HARD, _SOFTMAX, _ENTMAX15 = 0, 1, 2


def _no_temperature(n_clusters: int) -> float:
    raise ValueError("assignment must be 'softmax' or 'entmax15': hard has no temperature.")


def _one(n_clusters: int) -> float:
    return 1.0


def _sqrt_k(n_clusters: int) -> float:
    return np.sqrt(n_clusters)


def _one_hot_rows(summary: np.ndarray) -> bool:
    """Every row exactly one-hot (no row with two centers in its support)."""
    from . import _kernels as K

    return bool(summary[K.SOFT] == 0)


def _near_one_hot_rows(summary: np.ndarray) -> bool:
    """Every row within ``SOFTMAX_HARD_TOL`` of one-hot (softmax is never
    exactly one-hot)."""
    from . import _kernels as K

    return bool(summary[K.OFF_WINNER_MAX] <= SOFTMAX_HARD_TOL)


@dataclass(frozen=True)
class Assignment:
    """One way to turn a row's squared distances into responsibilities.

    Parameters
    ----------
    name : str
        The public name (``assignment=`` everywhere).
    code : int
        What the kernels switch on (``fastrbfkm._kernels.HARD`` ...).
    soft : bool
        Whether it has a temperature (critical temperatures, annealing).
    critical_factor : callable
        ``critical_factor(k)``: the global critical temperature is
        ``2 * lambda_max * critical_factor(k)``, from the assignment's
        Jacobian at the uniform point (``(1/k)(I - 11^T/k)`` for softmax,
        ``k^{-1/2}(I - 11^T/k)`` for entmax15). Raises for ``hard``.
    split_factor : float
        A center's local critical temperature is ``2 * split_factor *
        lambda_max`` of its ``psi``-weighted scatter (1 for softmax,
        ``sqrt(2)`` for entmax15, where two copies share the weight).
    jacobian : str
        ``psi(r)``, the weight of a row in the scatter that the kernels
        form (:func:`fastrbfkm._kernels.assignment.jacobian_weight`):
        ``"r"`` or ``"sqrt(r)"``.
    is_hard : callable
        ``is_hard(summary)``: whether a pass's summary says every row is
        (numerically) one-hot, where the annealing stops.
    backward : str or None
        The name in :mod:`fastrbfkm._kernels` of the kernel of the
        vector-Jacobian product through the assignment (``backward(R, G) ->
        G_z``; :meth:`vjp`), or None where it is piecewise constant.
    """

    name: str
    code: int
    soft: bool
    critical_factor: Callable[[int], float]
    split_factor: float
    jacobian: str
    is_hard: Callable[[np.ndarray], bool]
    backward: str | None

    def vjp(self) -> Callable | None:
        """The kernel :attr:`backward` names (None for ``hard``)."""
        if self.backward is None:
            return None
        from . import _kernels as K

        return getattr(K, self.backward)


def _same(X, *args):
    """The identity projection: X itself (no copy)."""
    return X


def _distances(rows, C: np.ndarray):
    """``||x - c||`` of each row to each center (the Euclidean ``transform``)."""
    return rows.distances(C)


def _half_squared(rows, C: np.ndarray):
    """Half the squared distance, ``1 - x.c`` between unit vectors (the
    cosine ``transform``)."""
    return rows.squared_distances(C) / 2


@dataclass(frozen=True)
class Metric:
    """How rows and centers are measured, and so projected.

    The kernels measure squared Euclidean distances only; a metric is the
    projection of the rows at the input door (once, one function per kind
    of input) and of the centers after every update that makes the kernels'
    distances its own. The input door (:func:`fastrbfkm._backend.open_rows`)
    keeps the entry on the rows source (``rows.metric``); the center updates
    call its projections, so a new metric is one entry of :data:`METRICS`
    and its functions.

    Parameters
    ----------
    name : str
        The public name (``metric=`` everywhere).
    sphere : bool
        Whether rows and centers lie on the unit sphere: the annealing's
        critical temperatures and the principal axes are then measured in
        the sphere's tangent spaces (:mod:`fastrbfkm._sphere`), and the
        Euclidean transfer moves are not made.
    cuda : bool
        Whether the GPU kernels take it (``backend="cuda"``, CUDA arrays).
    scaled : bool
        Whether the projection rescales every row, so that finite values of
        any magnitude pass the input checks.
    dense : callable
        ``dense(X)``: the rows of a dense array as the kernels read them (a
        copy where they change; X itself where they do not).
    csr : callable
        ``csr(X)``: the same for a :class:`fastrbfkm._kernels.CSR`.
    dask : callable
        ``dask(X)``: the same for a checked dask array, lazily.
    block : callable
        ``block(Y, offset)``: a block of a streamed file in place (``offset``:
        its first row's index, for errors); returns it.
    centers : callable
        ``centers(C, old=None)``: centers after an update (a weighted mean,
        a split, seeds) put back where the metric keeps them; ``old``: the
        centers before it, for one that has no projection. C itself where
        nothing changes.
    given : callable
        ``given(C)``: centers given by the caller, refused where they cannot
        be projected, projected otherwise.
    mean : callable
        ``mean(mean, covariance)``: the one center of all the data from its
        weighted mean and covariance (``covariance`` may be None).
    inertia_scale : float
        Kernel squared distances are divided by it for the reported
        ``inertia_`` and ``score`` (2 for cosine: ``1 - x.c`` is half of D).
    distances : callable
        ``distances(rows, C)``: the estimators' ``transform``.
    tensor : callable
        ``tensor(T, name)``: the rows of a torch tensor (X or C of the torch
        layer's functions) projected by differentiable torch ops; ``name``
        for the errors.
    """

    name: str
    sphere: bool
    cuda: bool
    scaled: bool
    dense: Callable
    csr: Callable
    dask: Callable
    block: Callable
    centers: Callable
    given: Callable
    mean: Callable
    inertia_scale: float
    distances: Callable
    tensor: Callable

    def inertia(self, D):
        """A kernel's sum of squared distances ``D`` as the metric reports
        it (``D / inertia_scale``)."""
        return D / self.inertia_scale


#: The assignments, by public name, in the order the documentation lists them.
ASSIGNMENTS: dict[str, Assignment] = {
    a.name: a
    for a in (
        Assignment("hard", _HARD, False, _no_temperature, 1.0, "r", _one_hot_rows, None),
        Assignment(
            "softmax", _SOFTMAX, True, _one, 1.0, "r", _near_one_hot_rows, "softmax_backward"
        ),
        Assignment(
            "entmax15",
            _ENTMAX15,
            True,
            _sqrt_k,
            np.sqrt(2.0),
            "sqrt(r)",
            _one_hot_rows,
            "entmax15_backward",
        ),
    )
}

#: The metrics, by public name.
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "euclidean",
            sphere=False,
            cuda=True,
            scaled=False,
            dense=_same,
            csr=_same,
            dask=_same,
            block=_same,
            centers=_same,
            given=_same,
            mean=_same,
            inertia_scale=1.0,
            distances=_distances,
            tensor=_same,
        ),
        Metric(
            "cosine",
            sphere=True,
            cuda=False,
            scaled=True,
            dense=_sphere.unit_dense,
            csr=_sphere.unit_csr,
            dask=_sphere.unit_dask,
            block=_sphere.to_unit,
            centers=_sphere.project,
            given=_sphere.given_centers,
            mean=_sphere.mean_direction,
            inertia_scale=2.0,
            distances=_half_squared,
            tensor=_sphere.unit_tensor,
        ),
    )
}

_BY_CODE = {a.code: a for a in ASSIGNMENTS.values()}


def metric_of(metric) -> Metric:
    """The registered metric named ``metric``; a clear ValueError for
    anything but the names in :data:`METRICS`."""
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"metric must be {' or '.join(map(repr, METRICS))}; got {metric!r}.")
    return METRICS[metric]


def assignment_of(code: int) -> Assignment:
    """The registered assignment whose kernel code is ``code``; a ValueError
    for any other code (never a silent fallback to another assignment)."""
    try:
        return _BY_CODE[code]
    except (KeyError, TypeError):
        raise ValueError(
            f"no assignment has kernel code {code!r}; registered: "
            f"{ {a.code: a.name for a in ASSIGNMENTS.values()} }."
        ) from None
