"""The annealing's spare centers: which of the k centers take part, which
wait as exact copies of another, and the splits and merges between the two.

Above the critical temperature every center sits on the mean, and exact
copies never separate by themselves (Rose 1998): the annealing keeps one
*active* center per group of copies and parks the others on it as *spares*.
When the temperature falls below an active center's critical temperature a
spare splits off it, nudged along the center's principal axis (Rose's
symmetry breaking); a split that closes again instead of opening returns its
spare, and active centers that come within the temperature's resolution of
one another merge, the second going back to the spares.

:class:`Spares` holds that state and its moves, for every annealing of the
package: :func:`fastrbfkm.annealing.run_anneal` (RBFKMeans, ``anneal``,
``phase_diagram``) and :class:`fastrbfkm.MiniBatchRBFKMeans`. Where the
spares go (:func:`fastrbfkm.annealing.candidates`) is read from the data;
this module only moves them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy.spatial.distance import cdist

from ._tunables import SPLIT_GAIN_RATIO, SPLIT_MARGIN

__all__ = ["Candidates", "Spares"]


@dataclass(frozen=True)
class Candidates:
    """The active centers that would get the spare centers, most wanted first,
    with the temperature below which each is unstable and what splitting it
    would gain (:func:`fastrbfkm.annealing.candidates`)."""

    index: np.ndarray  # (m,) center indices
    critical: np.ndarray  # (m,) their critical temperatures
    spread: np.ndarray  # (m,) largest eigenvalue of their local covariance
    gain: np.ndarray  # (m,) expected decrease of the inertia from a split, decreasing
    #: ``axes_of(at[positions])``: the (len, d) unit eigenvectors of those
    #: spreads, computed for the candidates that split only
    axes_of: Callable[[np.ndarray], np.ndarray]
    at: np.ndarray  # (m,) what ``axes_of`` calls each candidate

    @classmethod
    def of(
        cls,
        index: np.ndarray,
        critical: np.ndarray,
        spread: np.ndarray,
        gain: np.ndarray,
        axes: np.ndarray,
    ) -> Candidates:
        """Candidates whose axes ``(m, d)`` are known already."""
        return cls(
            index, critical, spread, gain, partial(np.take, axes, axis=0), np.arange(len(index))
        )

    def axes(self, positions: np.ndarray) -> np.ndarray:
        """The unit principal axes of the candidates at ``positions``."""
        return self.axes_of(self.at[positions])

    def unstable(self, next_sigma: float, margin: float = SPLIT_MARGIN) -> np.ndarray:
        """Which candidates are unstable at ``next_sigma``."""
        return self.critical > next_sigma * (1.0 + margin)

    def splitting(
        self,
        next_sigma: float,
        margin: float = SPLIT_MARGIN,
        gain_ratio: float = SPLIT_GAIN_RATIO,
    ) -> np.ndarray:
        """Which candidates split at ``next_sigma``: the unstable ones
        (:meth:`unstable`) whose gain is at least ``gain_ratio`` times the
        largest gain among them.

        Once a split cell's halves are themselves unstable at once (with
        many modes in many dimensions a smaller cell has a *higher* critical
        temperature), every unstable center splitting would double the
        active centers a temperature and hand every branch of the split
        tree the same number of centers, whatever its mass. Splitting the
        best-paying ones first, at most a factor ``1 / gain_ratio`` apart,
        gives the spares out by gain, as a greedy split would; the others
        wait for the next temperature. ``gain_ratio=0`` splits every
        unstable candidate.
        """
        unstable = self.unstable(next_sigma, margin)
        if gain_ratio <= 0 or not unstable.any():
            return unstable
        return unstable & (self.gain >= gain_ratio * self.gain[unstable].max())


def _no_pairs() -> np.ndarray:
    return np.empty((0, 2), dtype=np.int64)


class Spares:
    """Which of k centers are active, and which are spares parked on a leader.

    The methods that move centers take the (k, d) centers ``C`` and update
    them in place: a spare is always an exact copy of its leader after them.

    Parameters
    ----------
    active : ndarray of bool, shape (k,)
        Which centers take part.
    parent : ndarray of int, shape (k,)
        Each spare's leader (an active center); an active center's own index.
    pairs : ndarray of int, shape (m, 2), default=None
        The pairs ``(center, spare)`` split apart before the current
        temperature (None: none).

    Attributes
    ----------
    active, parent, pairs
        As above; the arrays are updated in place.
    """

    def __init__(self, active: np.ndarray, parent: np.ndarray, pairs: np.ndarray | None = None):
        self.active = active
        self.parent = parent
        self.pairs = _no_pairs() if pairs is None else pairs

    @classmethod
    def of_copies(cls, C: np.ndarray) -> Spares:
        """Exact copies among the rows of ``C`` are spares, parked on the
        first of their group."""
        _, first, parent = np.unique(C, axis=0, return_index=True, return_inverse=True)
        parent = first[parent.ravel()]  # each center's group leader
        return cls(parent == np.arange(C.shape[0]), parent)

    @classmethod
    def none(cls, k: int) -> Spares:
        """All ``k`` centers active, no spares."""
        return cls(np.ones(k, dtype=bool), np.arange(k))

    def __repr__(self) -> str:
        k, fresh = self.active.size, len(self.pairs)
        return f"Spares({self.n_active} of {k} active, {fresh} fresh pairs)"

    @property
    def all_active(self) -> bool:
        """Whether no spare is left."""
        return bool(self.active.all())

    @property
    def n_active(self) -> int:
        """Number of active centers."""
        return int(self.active.sum())

    def fresh_rows(self) -> np.ndarray:
        """The fresh pairs as rows of the active centers ``C[active]``."""
        return np.searchsorted(np.flatnonzero(self.active), self.pairs)

    def sync(self, C: np.ndarray) -> None:
        """Move every spare onto its leader."""
        active = self.active
        C[~active] = C[self.parent[~active]]

    def park(self, spare: int, leader: int) -> None:
        """Make ``spare`` (and the spares parked on it) spares of ``leader``."""
        parent = self.parent
        self.active[spare] = False
        parent[parent == spare] = leader
        parent[spare] = leader

    def close(self, C: np.ndarray, closed: np.ndarray) -> np.ndarray:
        """Undo the fresh splits that closed (``closed``: one bool a pair)
        instead of opening, which were premature: each center goes to the
        middle of its pair and its spare back to it (the center may try
        again at a colder temperature). Returns the spares parked."""
        undone = self.pairs[closed]
        for j, spare in undone:
            C[j] = (C[j].astype(np.float64) + C[spare]) / 2
            self.park(spare, j)
        return undone[:, 1]

    def merge_copies(self, C: np.ndarray, radius: float) -> np.ndarray:
        """Turn active centers within ``radius`` of an earlier active center
        back into spares parked on it. Returns them, in index order (the
        parked centers are not moved: see :meth:`settle`).

        A split that happened above the pair's true critical temperature
        closes again; the two centers would then move as one for ever (exact
        copies stay exact copies), so one of them goes back to the spares, to
        be split off where it is needed.
        """
        active = self.active
        before = active.copy()
        idx = np.flatnonzero(active)
        P = C[idx].astype(np.float64)
        close = cdist(P, P, "sqeuclidean") <= radius**2  # k x k, not k x k x d
        # the close pairs a < b, by a then b: each a parks the later centers
        # near it that are still active
        for a, b in zip(*np.nonzero(np.triu(close, 1)), strict=True):
            if active[idx[a]] and active[idx[b]]:
                self.park(idx[b], idx[a])
        return np.flatnonzero(before & ~active)

    def settle(self, C: np.ndarray, radius: float) -> np.ndarray:
        """The end of a temperature: its fresh pairs are no longer fresh,
        centers within ``radius`` merge (:meth:`merge_copies`) and every
        spare moves onto its leader. Returns the centers merged away."""
        self.pairs = _no_pairs()
        merged = self.merge_copies(C, radius)
        self.sync(C)
        return merged

    def split_unstable(
        self,
        C: np.ndarray,
        found: Candidates,
        next_sigma: float,
        rng: np.random.Generator,
        step: float,
        margin: float = SPLIT_MARGIN,
        gain_ratio: float = SPLIT_GAIN_RATIO,
    ) -> np.ndarray:
        """Seeded symmetry breaking: give a spare center to every candidate
        that splits at ``next_sigma`` (:meth:`Candidates.splitting` with
        ``margin`` and ``gain_ratio``). Returns the split pairs ``(m, 2)``,
        in the order of the candidates, which become the fresh pairs.

        The spare and its center are nudged apart along the principal axis
        by ``step`` times the square root of the spread along it, and the
        split opens up at the next temperature.
        """
        active, parent = self.active, self.parent
        spares = list(np.flatnonzero(~active))
        pairs = []
        split = np.flatnonzero(found.splitting(next_sigma, margin, gain_ratio))
        axes = found.axes(split)
        for j, spread, axis in zip(found.index[split], found.spread[split], axes, strict=True):
            spare = spares.pop(0)
            nudge = step * np.sqrt(spread) * axis
            nudge *= rng.choice([-1.0, 1.0])
            center = C[j].astype(np.float64)
            C[j] = center - nudge
            C[spare] = center + nudge
            active[spare] = True
            parent[spare] = spare
            pairs.append((j, spare))
        self.sync(C)
        self.pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        return self.pairs
