"""Passes over device-resident rows: the GPU twins of the CPU kernels' entry points.

Every function takes validated device arrays (``X`` of shape ``(n, d)`` in
float32 or float64, weights ``w`` of length n or 0 for unit weights) and
host centers ``C`` in X's dtype. Only C (and its shift, norms, transposed
copy) goes up; what comes back is k- or d-sized (statistics, scatter,
removal costs) or a few scalars. The ``(rows, k)`` scratch of the soft
passes is a fixed-size chunk, reused across calls through a
:class:`Workspace`.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .. import _kernels as K
from .._kernels.distances import prepare_centers
from . import assignment, distances, reduce, sums
from .config import BLOCK, ROW_THREADS, SPAN, TILE, cdiv, chunk_rows, n_segments


class Workspace:
    """Device buffers kept between passes, by name; a buffer is reallocated
    only when the shape or dtype asked for changes."""

    def __init__(self) -> None:
        self._buffers: dict[str, object] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype) -> object:
        """An uninitialized device array."""
        shape = tuple(int(s) for s in shape)
        dtype = np.dtype(dtype)
        buf = self._buffers.get(name)
        if buf is None or tuple(buf.shape) != shape or np.dtype(buf.dtype) != dtype:
            buf = cuda.device_array(shape, dtype=dtype)
            self._buffers[name] = buf
        return buf

    def zeros(self, name: str, shape: tuple[int, int]) -> object:
        """A float64 ``(B, L)`` device array of zeros."""
        buf = self.get(name, shape, np.float64)
        if buf.size:
            reduce.fill[(cdiv(shape[1], ROW_THREADS), shape[0]), ROW_THREADS](buf, 0.0)
        return buf

    def upload(self, name: str, array: np.ndarray) -> object:
        """A device copy of a small host array."""
        array = np.ascontiguousarray(array)
        buf = self.get(name, array.shape, array.dtype)
        if array.size:
            buf.copy_to_device(array)
        return buf


def empty(dtype=np.float64, ndim: int = 1) -> object:
    """A device array with no entries (unit weights, no partials, no labels, no C)."""
    return cuda.device_array((0,) * ndim, dtype=dtype)


_SUMMARY_OPS = np.full(K.N_SUMMARY, reduce.SUM, dtype=np.int32)
_SUMMARY_OPS[list(K.SUMMARY_MAXIMA)] = reduce.MAX


def fold_all(P, ws: Workspace, ops=None) -> np.ndarray:
    """Reduce the rows of a ``(B, L)`` float64 device array in the fixed
    order of :func:`.reduce.fold`; the ``(L,)`` result on the host."""
    ops = empty(np.int32) if ops is None else ops
    level = 0
    while P.shape[0] > 1:
        B, L = P.shape
        out = ws.get(f"fold{level}_{L}", (cdiv(B, SPAN), L), np.float64)
        reduce.fold[(cdiv(L, ROW_THREADS), cdiv(B, SPAN)), ROW_THREADS](P, ops, out)
        P = out
        level += 1
    return P.copy_to_host()[0]


class Centers:
    """Centers on the device, prepared on the host by the CPU's own
    :func:`~fastrbfkm._kernels.distances.prepare_centers`."""

    def __init__(self, C: np.ndarray, ws: Workspace):
        mu, Ct, cnorm = prepare_centers(C, True)
        self.k = C.shape[0]
        self.C = ws.upload("C", C)
        self.mu = ws.upload("mu", mu)
        self.Ct = ws.upload("Ct", Ct)
        self.cnorm = ws.upload("cnorm", cnorm)


def _norms(X, cen: Centers, ws: Workspace):
    n = X.shape[0]
    xnorm = ws.get("xnorm", (n,), np.float64)
    distances.row_norms[cdiv(n, ROW_THREADS), ROW_THREADS](X, cen.mu, xnorm)
    return xnorm


def _distance_block(X, i0, i1, cen: Centers, xnorm, E) -> None:
    kern = distances.kernels(X.dtype.name)
    grid = (cdiv(i1 - i0, TILE), cdiv(cen.k, TILE))
    kern.distances[grid, (BLOCK, BLOCK)](X, i0, i1, cen.Ct, cen.mu, xnorm, cen.cnorm, E)


def _assign(E, i0, i1, sign, sigma, mode, w, out, weighted, partial=None, p0=0) -> None:
    partial = empty() if partial is None else partial
    grid = cdiv(i1 - i0, ROW_THREADS)
    assignment.assign_rows[grid, ROW_THREADS](
        E, i0, i1, sign, sigma, mode, w, out, weighted, partial, p0
    )


def squared_distances(X, C: np.ndarray, ws: Workspace):
    """Dense ``(n, k)`` squared distances on the device, in X's dtype."""
    n = X.shape[0]
    cen = Centers(C, ws)
    out = cuda.device_array((n, cen.k), dtype=X.dtype)
    _distance_block(X, 0, n, cen, _norms(X, cen, ws), out)
    return out


def responsibilities(X, C: np.ndarray, sigma: float, mode: int, ws: Workspace):
    """Dense ``(n, k)`` responsibilities on the device, in X's dtype."""
    out = squared_distances(X, C, ws)
    _assign(out, 0, X.shape[0], 1.0, sigma, mode, empty(), out, False)
    return out


def assign_logits(Z, mode: int):
    """Row-wise softmax or entmax15 of device logits (temperature 1), Z's dtype."""
    out = cuda.device_array(Z.shape, dtype=Z.dtype)
    _assign(Z, 0, Z.shape[0], -1.0, 1.0, mode, empty(), out, False)
    return out


def nearest(X, C: np.ndarray, w, ws: Workspace, second: bool = False):
    """``(labels, mind, second, inertia, weight)``: device labels (int32),
    each row's smallest squared distance and (when asked for) the second
    smallest, in X's dtype, on the device; the weighted inertia and the
    total weight as floats."""
    n = X.shape[0]
    cen = Centers(C, ws)
    xnorm = _norms(X, cen, ws)
    labels = ws.get("labels", (n,), np.int32)
    both = ws.get("mind", (n, 2), X.dtype)
    mind, sec = both[:, 0], (both[:, 1] if second else empty(X.dtype))
    blocks = cdiv(n, TILE)
    partial = ws.get("hard_partial", (blocks, 2), np.float64)
    kern = distances.kernels(X.dtype.name)
    kern.nearest[blocks, (BLOCK, BLOCK)](
        X, cen.Ct, cen.mu, xnorm, cen.cnorm, w, labels, mind, sec, partial
    )
    inertia, weight = fold_all(partial, ws)
    return labels, mind, (both if second else None), float(inertia), float(weight)


def _label_sums(V, labels, w, C, kind: int, k: int, width: int, ws: Workspace) -> np.ndarray:
    """``(k, width)`` float64 per-label sums of :func:`.sums.label_sums`."""
    G = n_segments(V.shape[0], k * width)
    P = ws.zeros("label_partial", (G, k * width))
    sums.label_sums[G, ROW_THREADS](V, labels, w, C, kind, G, P)
    return fold_all(P, ws).reshape(k, width)


def block_stats(
    X, C: np.ndarray, w, sigma: float, mode: int, ws: Workspace, with_stats: bool = True
):
    """``(N, S, summary)`` as :func:`fastrbfkm._kernels.block_stats`: host
    float64 arrays of shapes ``(k,)``, ``(k, d)``, ``(6,)`` (N and S zeros
    when ``with_stats`` is False, which skips their accumulation)."""
    n, d = X.shape
    k = C.shape[0]
    summary = np.zeros(K.N_SUMMARY)
    NS = np.zeros((k, d + 1))
    if mode == K.HARD or sigma == 0.0:
        labels, _, _, inertia, weight = nearest(X, C, w, ws)
        if with_stats:
            NS = _label_sums(X, labels, w, empty(X.dtype, 2), sums.VALUES, k, d + 1, ws)
        summary[K.OBJECTIVE] = summary[K.INERTIA] = inertia
        summary[K.SUPPORT] = weight
        summary[K.SUPPORT_MAX] = 1.0
        return NS[:, d].copy(), NS[:, :d].copy(), summary
    cen = Centers(C, ws)
    xnorm = _norms(X, cen, ws)
    m = chunk_rows(n, k)
    E = ws.get("E", (m, k), X.dtype)
    G = n_segments(min(n, m), k * (d + 1))
    P = ws.zeros("stats_partial", (G, k * (d + 1))) if with_stats else None
    bounds = [(i0, min(n, i0 + m)) for i0 in range(0, n, m)]
    blocks = sum(cdiv(b - a, ROW_THREADS) for a, b in bounds)
    rows = ws.get("row_partial", (blocks, K.N_SUMMARY), np.float64)
    kern = sums.kernels(X.dtype.name)
    p0 = 0
    for i0, i1 in bounds:
        _distance_block(X, i0, i1, cen, xnorm, E)
        _assign(E, i0, i1, 1.0, sigma, mode, w, E, True, rows, p0)
        p0 += cdiv(i1 - i0, ROW_THREADS)
        if with_stats:
            grid = (cdiv(k, TILE), cdiv(d + 1, TILE), G)
            kern.weighted_sums[grid, (BLOCK, BLOCK)](E, i0, i1, X, G, P)
    if with_stats:
        NS = fold_all(P, ws).reshape(k, d + 1)
    summary[:] = fold_all(rows, ws, ws.upload("summary_ops", _SUMMARY_OPS))
    return NS[:, d].copy(), NS[:, :d].copy(), summary


def hard_assign(X, C: np.ndarray, w, ws: Workspace):
    """``(labels, mind, inertia)`` as :func:`fastrbfkm._kernels.hard_assign`,
    labels (int32) and distances left on the device."""
    labels, mind, _, inertia, _ = nearest(X, C, w, ws)
    return labels, mind, inertia


def removal_costs(X, C: np.ndarray, w, ws: Workspace) -> np.ndarray:
    """As :func:`fastrbfkm._kernels.removal_costs`: float64 ``(k,)`` on the host."""
    k = C.shape[0]
    if k == 1:
        return np.zeros(1)
    labels, _, both, _, _ = nearest(X, C, w, ws, second=True)
    return _label_sums(both, labels, w, empty(X.dtype, 2), sums.GAP, k, 2, ws)[:, 0]


def center_scatter(X, C: np.ndarray, w, sigma: float, mode: int, ws: Workspace):
    """``(N, A)`` of :func:`fastrbfkm._kernels.center_scatter` for every center,
    float64 ``(k,)`` and ``(k, d, d)`` on the host."""
    n, d = X.shape
    k = C.shape[0]
    width = d * d + 1
    if mode == K.HARD or sigma == 0.0:
        labels, _, _, _, _ = nearest(X, C, w, ws)
        NA = _label_sums(X, labels, w, ws.upload("C", C), sums.SCATTER, k, width, ws)
    else:
        cen = Centers(C, ws)
        xnorm = _norms(X, cen, ws)
        m = chunk_rows(n, k)
        E = ws.get("E", (m, k), X.dtype)
        G = n_segments(min(n, m), k * width)
        P = ws.zeros("scatter_partial", (G, k * width))
        for i0 in range(0, n, m):
            i1 = min(n, i0 + m)
            _distance_block(X, i0, i1, cen, xnorm, E)
            _assign(E, i0, i1, 1.0, sigma, mode, w, E, False)
            grid = (cdiv(width, ROW_THREADS), k, G)
            sums.soft_scatter[grid, ROW_THREADS](E, i0, i1, X, cen.C, w, mode, G, P)
        NA = fold_all(P, ws).reshape(k, width)
    return NA[:, d * d].copy(), NA[:, : d * d].reshape(k, d, d).copy()


def moments(X, w, ws: Workspace) -> tuple[np.ndarray, np.ndarray]:
    """Weighted mean ``(d,)`` and covariance ``(d, d)`` in float64 (``w`` of
    length 0: unit weights), as :class:`fastrbfkm._rows.InMemoryRows`."""
    d = X.shape[1]
    none = empty(np.int32)
    sums_w = _label_sums(X, none, w, empty(X.dtype, 2), sums.VALUES, 1, d + 1, ws)[0]
    total = sums_w[d]
    mean = sums_w[:d] / (total if total > 0 else 1.0)
    center = ws.upload("mean", mean[None, :])
    scatter = _label_sums(X, none, w, center, sums.SCATTER, 1, d * d + 1, ws)[0, : d * d]
    return mean, scatter.reshape(d, d) / total


def argmax(values, ws: Workspace) -> int:
    """Index of the largest entry of a device vector (ties: the lowest)."""
    index = empty(np.int64)
    level = 0
    while True:
        B = values.shape[0]
        out_v = ws.get(f"argmax_v{level % 2}", (cdiv(B, SPAN),), values.dtype)
        out_i = ws.get(f"argmax_i{level % 2}", (cdiv(B, SPAN),), np.int64)
        grid = cdiv(cdiv(B, SPAN), ROW_THREADS)
        reduce.fold_argmax[grid, ROW_THREADS](values, index, out_v, out_i)
        values, index = out_v, out_i
        level += 1
        if values.shape[0] == 1:
            return int(index.copy_to_host()[0])


def gather(X, index: np.ndarray, ws: Workspace) -> np.ndarray:
    """Host copy of the rows ``X[index]``."""
    idx = ws.upload("gather_index", np.asarray(index, dtype=np.int64))
    out = ws.get("gather_rows", (idx.shape[0], X.shape[1]), X.dtype)
    if idx.shape[0]:
        reduce.gather_rows[cdiv(idx.shape[0], ROW_THREADS), ROW_THREADS](X, idx, out)
    return out.copy_to_host()


def farthest(X, C: np.ndarray, w, m: int, ws: Workspace):
    """``(dist, index, rows, weights, labels)`` of the m rows farthest from
    their nearest center, farthest first, ties to the lowest index (as the
    CPU's farthest pass): m argmax reductions over the device distances."""
    n = X.shape[0]
    m = min(int(m), n)
    labels, values, _, _, _ = nearest(X, C, w, ws)  # the distances are scratch now
    picked = np.empty(m, dtype=np.int64)
    dist = np.empty(m)
    for r in range(m):
        picked[r] = argmax(values, ws)
        dist[r] = float(values[picked[r]])
        reduce.set_values[1, ROW_THREADS](values, ws.upload("picked", picked[r : r + 1]), -np.inf)
    weights = (
        np.array([float(w[i]) for i in picked], dtype=np.float64) if w.shape[0] else np.ones(m)
    )
    chosen_labels = np.array([int(labels[i]) for i in picked], dtype=np.int32)
    return dist, picked, gather(X, picked, ws), weights, chosen_labels


def inertia(X, C: np.ndarray, w, ws: Workspace):
    """``(inertia, counts)`` of :meth:`fastrbfkm._rows.Rows.inertia`; the
    labels stay on the device (only the k counts come back)."""
    labels, _, _, total, _ = nearest(X, C, w, ws)
    counts = np.bincount(labels.copy_to_host(), minlength=C.shape[0])
    return total, counts


def assign(X, C: np.ndarray, w, ws: Workspace):
    """``(labels, inertia, counts)`` of :meth:`fastrbfkm._rows.Rows.assign`:
    host int32 labels (the fit's result, as the CPU's), the inertia and rows
    per center."""
    labels, _, _, inertia, _ = nearest(X, C, w, ws)
    host = labels.copy_to_host()
    return host, inertia, np.bincount(host, minlength=C.shape[0])
