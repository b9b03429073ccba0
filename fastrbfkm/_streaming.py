"""Out-of-core fitting: a memory-mapped file's rows, streamed block by block.

A ``numpy.memmap`` larger than the memory the fit may use (scikit-learn's
``working_memory`` setting, 1024 MiB unless changed with
``sklearn.config_context(working_memory=...)``) is not read through the
mapping: every pass reads the file's rows in order, one block at a time, with
ordinary reads into one reused buffer of at most ``working_memory`` bytes,
and runs the pass's block function (:data:`fastrbfkm._rows.PASSES`) on it.
Reading through the mapping itself would leave every page of the file that
a pass touched mapped into the process and counted in its resident memory;
file reads go through the page cache, which the system reclaims as it needs.

The values (NaN, inf, magnitude) are checked block by block during the first
pass, so no pass is spent on validation alone.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator

import numpy as np
from sklearn import get_config

from . import _kernels as K
from ._model import METRICS, Metric
from ._rows import BlockRows, draw_into, fold, label_counts
from ._validation import as_float_array


def working_memory_bytes() -> int:
    """scikit-learn's ``working_memory`` (MiB) in bytes: the block budget."""
    return int(get_config()["working_memory"] * 2**20)


def file_region(X) -> tuple[str, int] | None:
    """``(filename, offset)`` of the first row of a C-contiguous 2-D
    ``numpy.memmap`` (or a row slice of one) in its file; None otherwise."""
    if not isinstance(X, np.memmap) or X.ndim != 2 or not X.flags.c_contiguous:
        return None
    root = X
    while not isinstance(root.base, mmap.mmap):
        if not isinstance(root.base, np.memmap):
            return None
        root = root.base
    if root.filename is None:
        return None
    return root.filename, int(root.offset) + (X.ctypes.data - root.ctypes.data)


def streams(X) -> bool:
    """Whether the estimator streams X: a C-contiguous, real, 2-D, non-empty
    ``numpy.memmap`` larger than the working memory."""
    return (
        isinstance(X, np.memmap)
        and X.ndim == 2
        and X.size > 0
        and X.dtype.kind in "biuf"
        and X.nbytes > working_memory_bytes()
        and file_region(X) is not None
    )


def _read_exactly(file, view: memoryview, filename: str) -> None:
    done = 0
    while done < len(view):
        got = file.readinto(view[done:])
        if not got:
            raise OSError(f"{filename}: the file ended before the array did.")
        done += got


class StreamedRows(BlockRows):
    """Rows of a memory-mapped file, read in blocks into one reused buffer.

    Parameters
    ----------
    X : numpy.memmap
        The data (:func:`streams`); float32 stays float32, other dtypes are
        converted block by block to float64.
    w : ndarray
        Checked weights, length 0 for unit weights.
    block_rows : int or None, default=None
        Rows per block; None fits a block (and, for a converted dtype, its raw
        bytes) into the working memory.
    metric : Metric, default=METRICS["euclidean"]
        The entry of :data:`fastrbfkm._model.METRICS` whose projection every
        block is read through (its ``block``, in place: ``"cosine"`` scales
        each row to unit length, the arithmetic of the in-memory copy), and
        a drawn batch (its ``dense``).
    """

    def __init__(
        self,
        X: np.memmap,
        w: np.ndarray,
        block_rows: int | None = None,
        metric: Metric = METRICS["euclidean"],
    ):
        self.filename, self.start = file_region(X)
        self.n, self.d = X.shape
        self.raw = X.dtype
        self.dtype = np.dtype(np.float32 if X.dtype == np.float32 else np.float64)
        self.w = w
        self.weight = float(w.sum()) if w.size else float(self.n)
        self.convert = self.raw != self.dtype
        row_bytes = self.d * (self.dtype.itemsize + (self.raw.itemsize if self.convert else 0))
        if block_rows is None:
            block_rows = working_memory_bytes() // row_bytes
        self.block_rows = int(max(1, min(block_rows, self.n)))
        self._buffers: tuple[np.ndarray, np.ndarray | None] | None = None
        self._checked = False
        self.metric = metric

    def blocks(self) -> Iterator[tuple[int, np.ndarray]]:
        """``(offset, block)`` for every block in row order; the block is a view
        of the reused buffer, valid until the next one is read."""
        if self._buffers is None:
            rows = self.block_rows
            self._buffers = (
                np.empty((rows, self.d), dtype=self.dtype),
                np.empty((rows, self.d), dtype=self.raw) if self.convert else None,
            )
        buffer, raw = self._buffers
        row_bytes = self.d * self.raw.itemsize
        with open(self.filename, "rb", buffering=0) as file:
            for start in range(0, self.n, self.block_rows):
                stop = min(self.n, start + self.block_rows)
                block = buffer[: stop - start]
                target = raw[: stop - start] if self.convert else block
                file.seek(self.start + start * row_bytes)
                _read_exactly(file, memoryview(target.view(np.uint8)).cast("B"), self.filename)
                if self.convert:
                    np.copyto(block, target, casting="unsafe")
                if not self._checked:
                    as_float_array(
                        block,
                        "X",
                        dtype=self.dtype,
                        coordinates=not self.metric.scaled,
                        fitting=True,
                    )
                self.metric.block(block, start)
                yield start, block
        self._checked = True

    def _weights(self, start: int, rows: int) -> np.ndarray:
        return self.w[start : start + rows] if self.w.size else self.w

    def reduce(self, name: str, *args):
        return fold(name, self.blocks(), self.w, *args)

    def draw_weighted(self, m: int, key: int) -> tuple[np.ndarray, np.ndarray]:
        return draw_into(self, m, key, self.blocks())

    def assign(self, C: np.ndarray):
        labels = np.empty(self.n, dtype=np.int32)
        inertia = 0.0
        for start, X in self.blocks():
            part, _, block_inertia = K.hard_assign(X, C, self._weights(start, X.shape[0]), False)
            labels[start : start + X.shape[0]] = part
            inertia += block_inertia
        return labels, inertia, label_counts(labels, C.shape[0])

    def batch(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """m rows drawn uniformly with replacement, read through a read-only
        map of the file (only their pages), converted and checked."""
        index = np.sort(rng.integers(0, self.n, int(m)))
        mapped = np.memmap(
            self.filename, dtype=self.raw, mode="r", offset=self.start, shape=(self.n, self.d)
        )
        rows = np.ascontiguousarray(mapped[index], dtype=self.dtype)
        del mapped
        rows = as_float_array(
            rows, "X", dtype=self.dtype, coordinates=not self.metric.scaled, fitting=True
        )
        rows = self.metric.dense(rows)
        return rows, self.w[index] if self.w.size else self.w

    def _per_row(self, kernel, C: np.ndarray, *args) -> np.ndarray:
        """``(n, k)`` in memory, filled block by block with ``kernel(block, C, *args)``."""
        out = np.empty((self.n, C.shape[0]), dtype=self.dtype)
        for start, X in self.blocks():
            out[start : start + X.shape[0]] = kernel(X, C, *args)
        return out

    def squared_distances(self, C: np.ndarray) -> np.ndarray:
        return self._per_row(K.squared_distances, C)

    def responsibilities(self, C: np.ndarray, sigma: float, mode: int) -> np.ndarray:
        return self._per_row(K.responsibilities, C, sigma, mode)
