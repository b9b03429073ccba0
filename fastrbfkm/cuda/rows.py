"""A rows source on the GPU: the fit loop's passes over device-resident data.

:class:`DeviceRows` implements :class:`fastrbfkm._rows.Rows` with the CUDA
passes of :mod:`.passes`. X and the weights go to the device once (CUDA
arrays are used in place); every pass uploads the small centers and brings
back only what the loop needs: ``(N, S, summary)`` (k + k d + 6 floats) per
soft or hard Lloyd step, k- or k d^2-sized sums for the scatter and the
removal costs, a few rows for the farthest-point relocation, and the labels
once, at the end of a fit.
"""

from __future__ import annotations

import numpy as np

from .._rows import Rows
from . import arrays, passes, seeding
from .passes import Workspace


class DeviceRows(Rows):
    """Validated device data ``X`` (n, d) and weights ``w`` (n, or length 0
    for unit weights)."""

    def __init__(self, X, w):
        self.X = X
        self.w = w
        self.n, self.d = (int(s) for s in X.shape)
        self.dtype = np.dtype(X.dtype)
        self.ws = Workspace()
        self.weight = arrays.value_ranges(w)[3] if w.shape[0] else float(self.n)

    @classmethod
    def from_input(cls, X, sample_weight=None) -> DeviceRows:
        """Validate host or CUDA data and weights and put them on the device."""
        Xd, _ = arrays.device_data(X)
        return cls(Xd, arrays.device_weights(sample_weight, Xd.shape[0]))

    def reduce(self, name: str, *args):
        X, w, ws = self.X, self.w, self.ws
        if name == "moments":
            (weighted,) = args
            return passes.moments(X, w if weighted else passes.empty(), ws)
        if name == "stats":
            C, sigma, mode = args
            return passes.block_stats(X, self._centers(C), w, float(sigma), int(mode), ws)
        if name == "scatter":
            C, sigma, mode = args
            return passes.center_scatter(X, self._centers(C), w, float(sigma), int(mode), ws)
        if name == "removal_costs":
            (C,) = args
            return passes.removal_costs(X, self._centers(C), w, ws)
        if name == "farthest":
            C, m = args
            return passes.farthest(X, self._centers(C), w, int(m), ws)
        if name == "inertia":
            (C,) = args
            return passes.inertia(X, self._centers(C), w, ws)
        raise ValueError(f"unknown pass {name!r}")

    def sample(self, m: int, key: int) -> Rows:
        """The GPU's passes are fast enough to anneal on every row: no sample."""
        return self

    def assign(self, C: np.ndarray):
        return passes.assign(self.X, self._centers(C), self.w, self.ws)

    def initial_centers(self, k: int, init, rng: np.random.Generator) -> np.ndarray:
        """As :func:`fastrbfkm.seeding.initial_centers`, with the same draws
        from ``rng``: k-means++ runs on the device; "random" copies the
        weights (not X) to the host to draw the rows."""
        if isinstance(init, str) and init == "k-means++":
            trials = 2 + int(np.log(k))
            index = seeding.kmeans_plusplus(self.X, self.w, k, rng.random((k, trials)), self.ws)
            return passes.gather(self.X, index, self.ws)
        if isinstance(init, str):
            p = None
            if self.w.shape[0]:
                w = self.w.copy_to_host().astype(np.float64)
                p = w / w.sum()
                if np.count_nonzero(p) < k:
                    p = None
            index = np.sort(rng.choice(self.n, size=k, replace=False, p=p))
            return passes.gather(self.X, index, self.ws)
        return np.array(init, dtype=self.dtype, order="C", copy=True)

    def _centers(self, C: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(C, dtype=self.dtype)
