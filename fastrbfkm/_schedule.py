"""Annealing schedules: the decreasing temperatures an annealing visits.

Every annealing in the package reads its temperatures from one
:class:`Schedule`: :func:`fastrbfkm.annealing.run_anneal` (for
:class:`fastrbfkm.RBFKMeans`, :func:`fastrbfkm.anneal` and
:func:`fastrbfkm.phase_diagram`) walks :meth:`Schedule.temperatures`;
:class:`fastrbfkm.MiniBatchRBFKMeans` moves one temperature at a time
(:meth:`Schedule.next`, :meth:`Schedule.ends_after`,
:meth:`Schedule.first_below`); the torch layer's ``anneal`` takes one
:meth:`GeometricSchedule.next`. A new kind of schedule is one subclass
that defines :meth:`Schedule.temperatures`; the stepping methods follow
from it.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ._tunables import MAX_TEMPERATURES

__all__ = ["GeometricSchedule", "GivenSchedule", "Schedule"]


class Schedule(ABC):
    """A decreasing sequence of temperatures ``sigma > 0``.

    A subclass defines :meth:`temperatures`; :meth:`next`,
    :meth:`ends_after` and :meth:`first_below` step through them (a
    subclass may give closed forms instead, as :class:`GeometricSchedule`
    does).
    """

    @abstractmethod
    def temperatures(self) -> np.ndarray:
        """The temperatures, strictly decreasing, as a float64 array."""

    def next(self, sigma: float) -> float:
        """The temperature after ``sigma``: the first one below it.

        Raises
        ------
        ValueError
            When the schedule has none below ``sigma``.
        """
        below = self._below(sigma)
        if not below.size:
            raise ValueError(f"the schedule has no temperature below {sigma!r}.")
        return float(below[0])

    def ends_after(self, sigma: float) -> bool:
        """Whether the schedule ends at ``sigma`` (none of its temperatures is below it)."""
        return not self._below(sigma).size

    def first_below(self, sigma: float, top: float) -> float:
        """The first temperature after ``sigma`` below ``top`` (``0 < top <=
        sigma``): where a center unstable below ``top`` can split. When none
        is below ``top``, the last temperature (``sigma`` itself when it is
        the last)."""
        after = self._below(sigma)
        under = after[after < top]
        return float(under[0] if under.size else after[-1] if after.size else sigma)

    def _below(self, sigma: float) -> np.ndarray:
        temperatures = self.temperatures()
        return temperatures[temperatures < sigma]


@dataclass(frozen=True)
class GeometricSchedule(Schedule):
    """``start, start * cooling, start * cooling**2, ...`` down to the first
    temperature at or below ``stop``.

    Attributes
    ----------
    start : float
        The first temperature, > 0.
    cooling : float
        The factor between temperatures, in (0, 1).
    stop : float or None
        The last temperature: the schedule goes down to the first
        temperature ``<= stop`` (None: ``start`` only, for
        :meth:`temperatures`; :meth:`next` still steps on).
    """

    start: float
    cooling: float
    stop: float | None = None

    def temperatures(self) -> np.ndarray:
        """The temperatures (at most ``MAX_TEMPERATURES`` of them).

        Raises
        ------
        ValueError
            When ``start``, ``stop`` or ``cooling`` is out of range, or the
            schedule would be longer than ``MAX_TEMPERATURES``.
        """
        start, stop, cooling = self.start, self.stop, self.cooling
        if stop is None:
            return np.array([start])
        if not (start > 0 and stop > 0 and 0 < cooling < 1):
            raise ValueError("need start > 0, stop > 0 and 0 < cooling < 1.")
        count = 1
        if stop < start:
            count = max(1, int(np.ceil(np.log(stop / start) / np.log(cooling))) + 1)
        if count > MAX_TEMPERATURES:
            raise ValueError(
                f"cooling={cooling!r} would take {count} temperatures from {start:.3g} down to "
                f"{stop:.3g}; at most {MAX_TEMPERATURES} are allowed: cool faster (a smaller "
                "cooling; the default is 0.8) or stop at a higher temperature."
            )
        return start * cooling ** np.arange(count)

    def next(self, sigma: float) -> float:
        """``sigma * cooling``, from any ``sigma`` (not only the schedule's own)."""
        return sigma * self.cooling

    def ends_after(self, sigma: float) -> bool:
        """Whether the next temperature would be below ``stop`` (never
        without a ``stop``)."""
        return self.stop is not None and sigma * self.cooling < self.stop

    def first_below(self, sigma: float, top: float) -> float:
        """``sigma * cooling**m`` for the least ``m >= 1`` that is below
        ``top`` (``0 < top <= sigma``), whatever ``stop``."""
        return sigma * self.cooling ** (
            math.floor(math.log(top / sigma) / math.log(self.cooling)) + 1
        )


@dataclass(frozen=True, eq=False)
class GivenSchedule(Schedule):
    """Temperatures given as they are (checked by the caller: positive and
    strictly decreasing).

    Attributes
    ----------
    given : ndarray of shape (T,)
        The temperatures.
    """

    given: np.ndarray

    def temperatures(self) -> np.ndarray:
        """The given temperatures."""
        return self.given
