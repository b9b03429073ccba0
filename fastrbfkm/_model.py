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


@dataclass(frozen=True)
class Metric:
    """How rows and centers are measured: ``name`` is the public name
    (``metric=`` everywhere); ``sphere`` says whether rows are projected to
    unit length at the input door and centers kept on the unit sphere (the
    rows source's ``sphere``: :mod:`fastrbfkm._sphere`)."""

    name: str
    sphere: bool


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
    m.name: m for m in (Metric("euclidean", False), Metric("cosine", True))
}

_BY_CODE = {a.code: a for a in ASSIGNMENTS.values()}


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
