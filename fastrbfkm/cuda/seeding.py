"""Greedy k-means++ on device-resident rows: the twin of
:func:`fastrbfkm._kernels.kmeans_plusplus`, with the same random draws.

Each draw is a point picked with probability proportional to its mass
(``w``, then ``w`` times the squared distance to the closest seed so far):
the first index whose running sum of masses exceeds ``u`` times the total.
The running sum is cut into segments of ``SEGMENT_ROWS`` rows summed in row
order on the device; the host finds the segment from their totals and the
row within it from the segment's masses, summing in the same order. Only
segment totals and one segment's masses come back per draw. The ``trials``
candidates of a seed are scored by their potentials (per segment on the
device, then in segment order), and the first lowest wins, as on the CPU.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import cuda

from .config import ROW_THREADS, SIMULATOR, cdiv
from .passes import Workspace, fold_all

#: Rows summed in order by one thread when the masses are accumulated.
SEGMENT_ROWS = 8 if SIMULATOR else 1024


@cuda.jit(device=True)
def sqdist_rows(X, i, j):
    """``||X[i] - X[j]||^2`` in float64, features in order: the CPU's
    distances for up to ``SEED_DIRECT_MAX_D`` (8) features; from 9 on the
    CPU takes the expansion around the rows' mean (a BLAS product), so a
    draw between two near-equal candidates may go the other way."""
    acc = 0.0
    for t in range(X.shape[1]):
        diff = float(X[i, t]) - float(X[j, t])
        acc += diff * diff
    return acc


@cuda.jit
def start_closest(X, seed, closest):
    """``closest[i] = ||X[i] - X[seed]||^2``. Grid ``ceil(n / ROW_THREADS)``."""
    i = cuda.grid(1)
    if i < X.shape[0]:
        closest[i] = sqdist_rows(X, i, seed)


@cuda.jit
def update_closest(X, seed, closest):
    """``closest[i] = min(closest[i], ||X[i] - X[seed]||^2)``."""
    i = cuda.grid(1)
    if i < X.shape[0]:
        v = sqdist_rows(X, i, seed)
        if v < closest[i]:
            closest[i] = v


@cuda.jit
def masses(closest, w, unit_closest, out):
    """``out[i] = w_i * closest_i`` (``w`` of length 0: 1; ``unit_closest``: closest is 1)."""
    i = cuda.grid(1)
    if i < out.shape[0]:
        c = 1.0 if unit_closest else closest[i]
        out[i] = w[i] * c if w.shape[0] > 0 else c


@cuda.jit
def segment_totals(mass, out):
    """``out[s] = mass[s*SEGMENT_ROWS] + ...`` in row order, one thread a segment."""
    s = cuda.grid(1)
    if s < out.shape[0]:
        acc = 0.0
        for i in range(s * SEGMENT_ROWS, min(mass.shape[0], (s + 1) * SEGMENT_ROWS)):
            acc += mass[i]
        out[s] = acc


@cuda.jit
def trial_potentials(X, closest, w, candidates, G, P):
    """``P[g, t] = sum_i w_i min(closest_i, ||X[i] - X[candidates[t]]||^2)``
    over segment g of the rows: each thread sums its rows in order, then the
    block's threads in order. Grid ``G``, block ``ROW_THREADS``."""
    part = cuda.shared.array(ROW_THREADS, numba.float64)
    n = X.shape[0]
    g = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    size = (n + G - 1) // G
    s0 = min(n, g * size)
    s1 = min(n, s0 + size)
    for t in range(candidates.shape[0]):
        acc = 0.0
        for i in range(s0 + tid, s1, ROW_THREADS):
            v = min(closest[i], sqdist_rows(X, i, candidates[t]))
            acc += w[i] * v if w.shape[0] > 0 else v
        part[tid] = acc
        cuda.syncthreads()
        if tid == 0:
            total = 0.0
            for u in range(ROW_THREADS):
                total += part[u]
            P[g, t] = total
        cuda.syncthreads()


def _pick(mass, totals: np.ndarray, value: float) -> int:
    """First row whose running mass exceeds ``value`` (clipped to n - 1)."""
    n = mass.shape[0]
    prefix = np.cumsum(totals)
    s = min(int(np.searchsorted(prefix, value, side="right")), totals.size - 1)
    start = s * SEGMENT_ROWS
    local = mass[start : min(n, start + SEGMENT_ROWS)].copy_to_host()
    running = np.empty(local.size)
    acc = float(prefix[s - 1]) if s > 0 else 0.0
    for r, m in enumerate(local):
        acc += m
        running[r] = acc
    return min(start + int(np.searchsorted(running, value, side="right")), n - 1)


def kmeans_plusplus(X, w, k: int, uniforms: np.ndarray, ws: Workspace) -> np.ndarray:
    """Row indices of k seeds chosen by greedy k-means++ from device rows X
    (weights ``w``, length 0 for unit weights), with the CPU kernel's draws
    ``uniforms`` of shape ``(k, trials)``."""
    n = X.shape[0]
    rows = cdiv(n, ROW_THREADS)
    closest = ws.get("seed_closest", (n,), np.float64)
    mass = ws.get("seed_mass", (n,), np.float64)
    totals = ws.get("seed_totals", (cdiv(n, SEGMENT_ROWS),), np.float64)
    G = max(1, min(cdiv(n, 64 * ROW_THREADS), 4096))
    trials = uniforms.shape[1]

    def draw(unit_closest: bool, u: np.ndarray) -> list[int]:
        masses[rows, ROW_THREADS](closest, w, unit_closest, mass)
        segment_totals[cdiv(totals.shape[0], ROW_THREADS), ROW_THREADS](mass, totals)
        host_totals = totals.copy_to_host()
        potential = float(np.cumsum(host_totals)[-1])
        return [_pick(mass, host_totals, float(x) * potential) for x in u]

    seeds = np.empty(k, dtype=np.int64)
    seeds[0] = draw(True, uniforms[0, :1])[0]
    start_closest[rows, ROW_THREADS](X, int(seeds[0]), closest)
    for c in range(1, k):
        candidates = np.array(draw(False, uniforms[c]), dtype=np.int64)
        P = ws.get("seed_potentials", (G, trials), np.float64)
        trial_potentials[G, ROW_THREADS](
            X, closest, w, ws.upload("seed_candidates", candidates), G, P
        )
        potentials = fold_all(P, ws)
        best = int(np.argmin(potentials))  # the first lowest, as the CPU's strict <
        seeds[c] = candidates[best]
        update_closest[rows, ROW_THREADS](X, int(seeds[c]), closest)
    return seeds
