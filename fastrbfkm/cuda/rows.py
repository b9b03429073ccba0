"""A rows source on the GPU: the fit loop's passes over device-resident data.

:class:`DeviceRows` implements :class:`fastrbfkm._rows.Rows` with the CUDA
passes of :mod:`.passes`. X and the weights go to the device once (CUDA
arrays are used in place); every pass uploads the small centers and brings
back only what the loop needs: ``(N, S, summary)`` (k + k d + 6 floats) per
soft or hard Lloyd step, k- or k d^2-sized sums for the scatter and the
removal costs, a few rows for the farthest-point relocation, and the labels
once, at the end of a fit. For new data, the per-row results (labels,
distances, responsibilities) go back where the data came from: to the host
for host data, as numba device arrays for CUDA arrays.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .._kernels.assignment import HARD
from .._rows import (
    CellSummary,
    Farthest,
    IndexedRows,
    Moments,
    Rows,
    draw_keys,
    oversample_index,
)
from . import arrays, passes, seeding
from .config import TILE, cdiv
from .distances import square_root
from .passes import Workspace


class DeviceRows(IndexedRows, Rows):
    """Validated device data ``X`` (n, d) and weights ``w`` (n, or length 0
    for unit weights); ``on_host``: the data came from the host (per-row
    results go back there)."""

    def __init__(self, X, w, on_host: bool = False):
        self.X = X
        self.w = w
        self.on_host = on_host
        self.n, self.d = (int(s) for s in X.shape)
        self.dtype = np.dtype(X.dtype)
        self.ws = Workspace()
        self.weight = arrays.value_ranges(w)[3] if w.shape[0] else float(self.n)

    @classmethod
    def from_input(cls, X, sample_weight=None, fitting: bool = False) -> DeviceRows:
        """Validate host or CUDA data (``fitting``: the data of a fit) and
        weights and put them on the device."""
        Xd, on_host = arrays.device_data(X, fitting=fitting)
        return cls(Xd, arrays.device_weights(sample_weight, Xd.shape[0]), on_host)

    @classmethod
    def from_host(cls, X: np.ndarray, w: np.ndarray) -> DeviceRows:
        """Copy validated host data and weights (length 0: unit weights) to the device."""
        weights = cuda.to_device(w) if w.size else cuda.device_array(0, dtype=np.float64)
        return cls(cuda.to_device(X), weights, on_host=True)

    def check_centers(self, C, name: str = "C") -> np.ndarray:
        return arrays.host_centers(C, self.X, name)  # device centers are copied

    def like_input(self, array: np.ndarray):
        return array if self.on_host else cuda.to_device(array)

    def moments(self, weighted: bool = True) -> Moments:
        """As the CPU's, with the covariance formed on the device whatever d
        is (the CUDA source keeps d x d matrices for wide data)."""
        mean, cov = passes.moments(self.X, self.w if weighted else passes.empty(), self.ws)
        return Moments(mean, np.diag(cov).copy(), cov)

    def stats(self, C: np.ndarray, sigma: float, mode: int, with_stats: bool = True):
        C = self._centers(C)
        return passes.block_stats(self.X, C, self.w, float(sigma), int(mode), self.ws, with_stats)

    def scatter(self, C: np.ndarray, sigma: float, mode: int):
        C = self._centers(C)
        return passes.center_scatter(self.X, C, self.w, float(sigma), int(mode), self.ws)

    def cell_summary(self, C: np.ndarray, scatter: bool) -> CellSummary:
        """The removal costs, the masses (and the cells' scatter) by
        separate passes; no cells' inertia (no such pass on the device)."""
        N, A = self.scatter(C, 0.0, HARD) if scatter else (self.stats(C, 0.0, HARD)[0], None)
        costs = passes.removal_costs(self.X, self._centers(C), self.w, self.ws)
        return CellSummary(costs, None, N, A)

    def farthest(self, C: np.ndarray, m: int) -> Farthest:
        return Farthest(*passes.farthest(self.X, self._centers(C), self.w, int(m), self.ws))

    def inertia(self, C: np.ndarray) -> tuple[float, np.ndarray]:
        inertia, counts = passes.inertia(self.X, self._centers(C), self.w, self.ws)
        return float(inertia), counts

    def _host_weights(self) -> np.ndarray:
        return self.w.copy_to_host().astype(np.float64) if self.w.shape[0] else np.empty(0)

    def oversample(self, C: np.ndarray, rate: float, key: int) -> tuple[np.ndarray, np.ndarray]:
        """As the CPU's: the n nearest distances and the weights come to the
        host to draw the rows (not X); the rows drawn are gathered on the device."""
        _, mind, _ = passes.hard_assign(self.X, self._centers(C), self.w, self.ws)
        w = self._host_weights()
        pick = oversample_index(mind.copy_to_host(), w, 0, float(rate), int(key))
        weights = w[pick] if w.size else np.ones(pick.size)
        return passes.gather(self.X, pick, self.ws), weights

    def draw_weighted(self, m: int, key: int) -> tuple[np.ndarray, np.ndarray]:
        """As the CPU's: the weights (not X) come to the host to draw the rows."""
        w = self._host_weights()
        keys = draw_keys(w, 0, self.n, int(key))
        index = np.sort(np.argsort(-keys, kind="stable")[: int(m)])
        weights = w[index] if w.size else np.ones(index.size)
        return passes.gather(self.X, index, self.ws), weights

    def batch(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """As the CPU's: m rows drawn uniformly, gathered on the device and
        copied to the host (the weights, if any, too)."""
        index = np.sort(rng.integers(0, self.n, int(m)))
        w = self._host_weights()
        return passes.gather(self.X, index, self.ws), w[index] if w.size else w

    def assign(self, C: np.ndarray):
        return passes.assign(self.X, self._centers(C), self.w, self.ws)

    # The seeding primitives (:func:`fastrbfkm.seeding.initial_centers`
    # seeds from them): the same draws from ``rng`` as the CPU's, greedy
    # k-means++ on the device, the weights (not X) on the host to draw rows.

    def host_weights(self) -> np.ndarray:
        return self._host_weights()

    def take(self, index: np.ndarray) -> np.ndarray:
        return passes.gather(self.X, index, self.ws)

    def nearest(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        labels, mind, _ = passes.hard_assign(self.X, self._centers(C), self.w, self.ws)
        return labels.copy_to_host(), mind.copy_to_host()

    def greedy_seeds(self, uniforms: np.ndarray, sample: np.ndarray | None = None) -> np.ndarray:
        k = uniforms.shape[0]
        if sample is None:
            return seeding.kmeans_plusplus(self.X, self.w, k, uniforms, self.ws)
        rows = cuda.to_device(passes.gather(self.X, sample, self.ws))
        unit = cuda.device_array(0, dtype=np.float64)
        return sample[seeding.kmeans_plusplus(rows, unit, k, uniforms, self.ws)]

    def _out(self, A):
        """A device result where the data came from."""
        return A.copy_to_host() if self.on_host else A

    def labels(self, C: np.ndarray):
        return self._out(passes.hard_assign(self.X, self._centers(C), self.w, self.ws)[0])

    def squared_distances(self, C: np.ndarray):
        return self._out(passes.squared_distances(self.X, self._centers(C), self.ws))

    def distances(self, C: np.ndarray):
        out = passes.squared_distances(self.X, self._centers(C), self.ws)
        square_root[cdiv(out.shape[0], TILE), TILE](out)
        return self._out(out)

    def responsibilities(self, C: np.ndarray, sigma: float, mode: int):
        out = passes.responsibilities(self.X, self._centers(C), float(sigma), int(mode), self.ws)
        return self._out(out)

    def total_inertia(self, C: np.ndarray) -> float:
        return float(passes.hard_assign(self.X, self._centers(C), self.w, self.ws)[2])

    def _centers(self, C: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(C, dtype=self.dtype)
