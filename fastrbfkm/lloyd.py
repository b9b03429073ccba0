"""Hard Lloyd iterations with deterministic relocation of empty clusters.

The loop follows scikit-learn's ``KMeans(algorithm="lloyd")`` step for step
(assign and update in one pass, relocate empty clusters, compare the center
shift with the tolerance, a final assignment), so that from the same initial
centers both give the same centers and labels. Every pass over the data goes
through a rows source (:mod:`fastrbfkm._rows`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import _kernels as K
from ._axes import cell_axes, cell_spreads, forms_scatter
from ._rows import CellInertiaRows, HardPasses, HostRows, Rows, hard_passes
from ._tunables import (
    BATCH_CELLS,
    MANY_CLUSTERS,
    MIN_ROUND_GAIN,
    MIN_SWAP_GAIN,
    NEIGHBOURS,
    ONE_MOVE_ROUNDS,
    PARTNERS,
    TRIAL_PATIENCE,
)

#: Used by the estimator and the paper's run; not part of the public API.
__all__ = ["LloydResult", "improve_by_swaps", "improve_by_transfers", "run_lloyd"]


@dataclass
class LloydResult:
    """Outcome of :func:`run_lloyd`."""

    centers: np.ndarray
    inertia: float
    n_iter: int


def update_centers(passes: HardPasses, C: np.ndarray, N: np.ndarray, S: np.ndarray) -> np.ndarray:
    """New centers from the hard statistics at C (the last pass of
    ``passes``): the weighted means of the cells, with every empty (zero
    mass) cell relocated to one of the points farthest from their centers
    (:meth:`~fastrbfkm._rows.HardPasses.farthest`: from the pass's own
    labels where it was pruned, one distance a row).

    A cell that still has no mass (no point is away from its center: fewer
    distinct points than clusters) goes to the heaviest cell's center, as in
    scikit-learn, so no center is ever NaN. On the sphere (``rows.sphere``)
    the means are scaled to unit length: spherical K-Means's update.
    """
    rows = passes.rows
    empty = np.flatnonzero(N == 0)
    far = passes.farthest(C, empty.size) if empty.size else None
    if far is not None and far.dist.max() > 0:
        for j, x, wi, old in zip(empty, far.rows, far.weights, far.labels, strict=False):
            S[old] -= wi * x
            N[old] -= wi
            S[j] = wi * x
            N[j] = wi
    new = np.empty_like(S)
    alive = N > 0
    new[alive] = S[alive] / N[alive, None]
    new[~alive] = new[np.argmax(N)]
    new = rows.metric.centers(new, C)
    return new.astype(rows.dtype, copy=False)


def run_lloyd(
    rows: Rows,
    C: np.ndarray,
    max_iter: int,
    tol: float,
    measure: bool = True,
    report: Callable[[int, float, float], None] | None = None,
    beat: float | None = None,
    passes: HardPasses | None = None,
) -> LloydResult:
    """Lloyd's algorithm over a rows source.

    ``tol`` is absolute: iteration stops when the sum of squared center
    shifts is ``<= tol`` or after ``max_iter`` iterations. scikit-learn also
    stops when the labels no longer change; the centers are then the same
    means of the same cells, so the shift is exactly 0 and this rule stops at
    the same iteration without keeping the labels of every row. With
    ``measure`` False the final inertia pass is skipped (a caller that
    assigns the rows to the result next measures it there): the result's
    inertia is then NaN. Where the source carries bounds between passes
    (many centers), the final pass is a pruned one too: after the last
    small shift it skips nearly every distance. ``report(iteration, inertia,
    shift)``, when given, is called after every iteration (counted from 0)
    with the inertia at the centers it started from and the squared shift.

    ``beat``, for a trial that only counts if it ends below this inertia:
    the run gives up once its shrinking decreases will clearly not take it
    below ``beat`` (:func:`_losing`); the result's inertia is then the last
    one measured (above ``beat``, and at least the inertia of the result's
    centers), without the final pass.

    ``passes``: the hard passes over ``rows`` with C's number of centers
    (:func:`~fastrbfkm._rows.hard_passes`), for runs that follow one another
    and carry the pruning bounds from one to the next; None: new ones, for
    this run only.
    """
    n_iter = 0
    C = rows.metric.centers(C)  # trial centers of the swap moves are placed off it
    if passes is None:
        passes = hard_passes(rows, C.shape[0])  # pruned where the rows can and it pays
    seen: list[float] = []  # the inertias so far
    for n_iter in range(1, max_iter + 1):
        N, S, summary = passes.stats(C)
        new = update_centers(passes, C, N, S)
        shift = float(((new.astype(np.float64) - C) ** 2).sum())
        C = new
        inertia = float(summary[K.INERTIA])
        seen.append(inertia)
        if report is not None:
            report(n_iter - 1, inertia, shift)
        if shift <= tol:
            break
        if beat is not None and _losing(seen, beat):
            return LloydResult(C, inertia, n_iter)
    if not measure:
        return LloydResult(C, float("nan"), n_iter)
    return LloydResult(C, passes.inertia(C), n_iter)


def _losing(seen: list[float], beat: float) -> bool:
    """Whether a Lloyd run whose inertias so far are ``seen`` will end above
    ``beat``, by the shrinking of its decreases: once the last three
    decreases each shrank (the last by a ratio ``q < 1``), the rest is taken
    to shrink as the last did, ``d q / (1 - q)`` in all; the run is losing
    when its gap to ``beat`` is more than :data:`TRIAL_PATIENCE` times
    that. The first decrease (the moved centers settling) is never one of
    them, and decreases that grow (a center crossing a cluster speeds up
    before it settles) never count as losing."""
    if len(seen) < 6 or seen[-1] <= beat:
        return False
    d = [a - b for a, b in zip(seen[-5:-1], seen[-4:], strict=True)]  # the last four decreases
    if not (d[0] > d[1] > d[2] > d[3] >= 0.0):
        return False
    q = d[3] / d[2]
    return seen[-1] - beat > TRIAL_PATIENCE * d[3] * q / (1.0 - q)


def improve_by_swaps(
    rows: Rows,
    start: LloydResult,
    max_iter: int,
    tol: float,
    candidates: int = 8,
    rounds: int | None = None,
    passes: HardPasses | None = None,
) -> LloydResult:
    """Move centers from where they help least to where a split helps most.

    At a Lloyd fixed point, a move takes a center r away (its points going
    to their second-nearest center, which raises the inertia by ``cost_r``)
    and puts it into the cell s with the largest expected split gain
    ``(2 / pi) N_s lambda_s`` (mass times principal variance: the 2-means
    split of a Gaussian), the two placed at ``c_s +- sqrt(2 lambda_s / pi)
    u_s`` along the principal axis; Lloyd's algorithm then runs again. The
    ``candidates`` moves with the best expected net gain are tried in turn,
    those expected to lose too (the gain is a Gaussian model's; real cells
    are often better split than that), and the first that lowers the
    inertia is kept (a trial's Lloyd run gives up once it is clearly losing:
    ``beat`` of :func:`run_lloyd`); the search ends when none does, or after
    ``log2(k) + ONE_MOVE_ROUNDS`` rounds. Each trial costs only hard
    passes. On wide data the principal variances and axes are rough (a few
    Lanczos steps: lower bounds), enough to rank and place the moves that
    Lloyd's algorithm then tries. A round's costs, gains and cells come
    from one pass over the rows (:meth:`~fastrbfkm._rows.Rows.cell_summary`)
    where the source forms the scatter matrices. ``n_iter``
    of the result counts every Lloyd iteration, the rejected trials' included.
    ``rounds`` caps the rounds below those bounds (None: no cap).
    ``passes``: the hard passes of the trials' Lloyd runs, as
    :func:`run_lloyd` takes them (None: new ones for this search).

    With many centers (``MANY_CLUSTERS`` or more) one move at a time would
    take O(k) rounds of Lloyd runs. A round there makes many moves at once
    (:func:`_moves_at_once`: about two Lloyd runs), and the search stops
    after ``log2(k)`` rounds, or after the first round that lowered the
    inertia by less than ``MIN_ROUND_GAIN``: a cost of a few Lloyd runs, at
    any k. On sources that do not give each cell's inertia, and where no two
    moves are apart (wide sparse rows: every center is among everyone's
    nearest), a round makes one move, and a kept move that lowered the
    inertia by less than ``MIN_ROUND_GAIN`` ends the search the same way.
    """
    best = start
    k = start.centers.shape[0]
    n_iter = start.n_iter
    if passes is None:
        passes = hard_passes(rows, k)
    batch = k // BATCH_CELLS if k >= MANY_CLUSTERS else 1
    most = int(np.ceil(np.log2(k))) if k > 1 else 0
    most = most if batch > 1 else most + ONE_MOVE_ROUNDS
    for _ in range(most if rounds is None else min(most, rounds)):
        C = best.centers
        cells = rows.cell_summary(C, forms_scatter(rows))
        costs = cells.costs
        if batch > 1:
            N, spread, axes_of = cell_spreads(rows, C, cells)
            gain = 2.0 / np.pi * (N * spread)
            found = _moves_at_once(
                rows, passes, best, cells.cells, gain, costs, batch, spread, axes_of, max_iter, tol
            )
            if found is not None:
                trial, its = found
                n_iter += its
                gained = trial.inertia < best.inertia * (1.0 - MIN_ROUND_GAIN)
                if trial.inertia < best.inertia:
                    best = trial
                if gained:
                    continue
                break
        else:
            N, spread, axes = cell_axes(rows, C, cells)
            gain = 2.0 / np.pi * (N * spread)

            def axes_of(index, axes=axes):
                return axes[index]

        net = gain[None, :] - costs[:, None]  # net[r, s]
        np.fill_diagonal(net, -np.inf)
        order = np.argsort(-net, axis=None, kind="stable")
        improved = False
        bar = best.inertia * (1.0 - MIN_SWAP_GAIN)
        for r, s in zip(*np.unravel_index(order[:candidates], net.shape), strict=True):
            moved = _moved(C, [(r, s)], spread, axes_of, rows.dtype)
            trial = run_lloyd(rows, moved, max_iter, tol, beat=bar, passes=passes)
            n_iter += trial.n_iter
            if trial.inertia < bar:
                # With many centers (one move at a time only where no two
                # moves are apart) a move that gained little ends the search
                # as a round of many moves that gained little does.
                improved = batch == 1 or trial.inertia < best.inertia * (1.0 - MIN_ROUND_GAIN)
                best = trial
                break
        if not improved:
            break
    return LloydResult(best.centers, best.inertia, n_iter)


def _moved(C, moves, spread, axes_of, dtype) -> np.ndarray:
    """C with every move ``(r, s)`` made: r and s placed on either side of
    ``c_s`` along its principal axis (``axes_of``: of the cells s only)."""
    out = C.astype(np.float64)
    axes = axes_of(np.array([s for _, s in moves], dtype=np.int64))
    for (r, s), axis in zip(moves, axes, strict=True):
        offset = np.sqrt(2.0 * spread[s] / np.pi) * axis
        out[r] = C[s] + offset
        out[s] = C[s] - offset
    return out.astype(dtype)


def _moves_at_once(rows, passes, best, before, gain, cost, most, spread, axes_of, max_iter, tol):
    """Many moves in one round: ``(result, iterations)`` or None.

    Up to ``most`` moves apart from each other (:func:`_apart_regions`)
    are made together and Lloyd's algorithm runs once; when that lowered the
    inertia, its result is the round's. Otherwise a move is kept where
    the inertia of its region's cells went down: those regions take their
    centers from that run, the others keep theirs, and Lloyd's algorithm
    runs again from there (on 100000 x 32 blobs with k = 512 every round's
    joint run ended lower than such a mix would have, so the mix is only
    the fallback). ``before`` is each cell's inertia at ``best.centers``
    (:class:`~fastrbfkm._rows.CellSummary`); ``spread`` and ``axes_of``
    (:func:`~fastrbfkm._axes.cell_spreads`) place the moves, the axes of
    the split cells only; ``passes`` are the Lloyd runs' and give the
    cells' inertia after the joint run. None over rows without the cells' inertia
    (:class:`~fastrbfkm._rows.CellInertiaRows`) or when fewer than two moves
    are apart; ``best`` itself when no region gained.
    """
    C = best.centers
    if not isinstance(rows, CellInertiaRows):
        return None
    regions = _apart_regions(C, gain, cost, most)
    if len(regions) < 2:
        return None
    moved = _moved(C, [move for move, _ in regions], spread, axes_of, rows.dtype)
    trial = run_lloyd(rows, moved, max_iter, tol, passes=passes)
    if trial.inertia < best.inertia:
        return trial, trial.n_iter
    after = passes.cell_inertia(trial.centers)
    kept = [region for _, region in regions if after[region].sum() < before[region].sum()]
    if not kept:
        return best, trial.n_iter
    mixed = C.copy()
    for region in kept:
        mixed[region] = trial.centers[region]
    final = run_lloyd(rows, mixed, max_iter, tol, passes=passes)
    return final, trial.n_iter + final.n_iter


def _apart_regions(C: np.ndarray, gain: np.ndarray, cost: np.ndarray, most: int) -> list:
    """Up to ``most`` moves ``((r, s), region)`` apart from each other: no
    move's centers r and s lie in another move's region (r, s and their
    :data:`NEIGHBOURS` nearest centers). The cells s go by decreasing split
    ``gain``, each with the cheapest ``cost`` center r outside every region
    so far (the expected net gain ``gain[s] - cost[r]`` is separable).

    Regions may share neighbours: asking them to be disjoint let through
    5-12 moves a round instead of ``most`` = 16 on 200000 x 64 blobs at
    k = 512, where a few centers are among the nearest of many (hubs), and
    the search ended 1.2% higher (``bench/README.md``, *Moves that only
    share neighbours*)."""
    k = C.shape[0]
    P = C.astype(np.float64)
    P -= P.mean(axis=0)
    near = K.nearest_centers(P, (P * P).sum(axis=1), min(NEIGHBOURS, k - 1))
    cheap = np.argsort(cost, kind="stable")
    in_region = np.zeros(k, dtype=bool)  # in some chosen move's region
    moving = np.zeros(k, dtype=bool)  # the r or s of some chosen move
    chosen = []
    for s in np.argsort(-gain, kind="stable"):
        if in_region[s] or moving[near[s]].any():
            continue
        for r in cheap[~in_region[cheap]][:PARTNERS]:
            region = np.concatenate([[r, s], near[r], near[s]])
            if r != s and not moving[region].any():
                in_region[region] = True
                moving[[r, s]] = True
                chosen.append(((int(r), int(s)), np.unique(region)))
                break
        if len(chosen) == most:
            break
    return chosen


def improve_by_transfers(rows: Rows, start: LloydResult, max_sweeps: int) -> LloydResult:
    """Hartigan's single-point transfers from a Lloyd fixed point, over rows
    held in host memory (:meth:`fastrbfkm._rows.HostRows.transfers`; over
    other rows ``start`` unchanged).

    A row moves to another cluster whenever that lowers the inertia with the
    two means updated; the result is a Lloyd fixed point too, often a lower
    one where clusters overlap. ``n_iter`` counts the sweeps. The sweeps
    visit every row against every center, one row at a time: with
    ``MANY_CLUSTERS`` centers or more they are skipped on dense rows (at
    k = 512 on 50000 x 32 blobs they took as long as the rest of the fit
    and lowered the inertia by 0.016%), not on CSR rows (wide and sparse,
    text-like: every row nearly as far from every center, where a row's
    move pays most often; on a 50000-row sample of a 100000 x 50000
    TF-IDF-like matrix with k = 256 they lowered the inertia by 0.9% in
    18 s).
    """
    if not isinstance(rows, HostRows):
        return start  # the sweeps visit the rows one at a time, in order
    if start.centers.shape[0] >= MANY_CLUSTERS and not rows.sparse:
        return start
    centers, sweeps = rows.transfers(start.centers, max_sweeps)
    centers = centers.astype(rows.dtype)
    inertia = rows.inertia(centers)[0]
    if not inertia < start.inertia:  # nothing moved (or rounding in the dtype)
        return LloydResult(start.centers, start.inertia, start.n_iter + sweeps)
    return LloydResult(centers, inertia, start.n_iter + sweeps)
