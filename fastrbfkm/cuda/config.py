"""Launch geometry of the CUDA kernels and how rows are split into chunks and segments.

Every partition depends only on the problem's shape (never on the device),
so that sums are reduced in the same order on every GPU. The kernels read
these constants at compile time.

Under the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) every thread is a
Python thread, so the simulator gets tiny tiles and tiny budgets: the same
kernels then run in seconds, and small test problems already cross tile,
chunk and segment boundaries.
"""

from __future__ import annotations

from dataclasses import dataclass

from numba.core import config as _numba_config

#: Whether numba.cuda is the simulator (read once, when numba is imported).
SIMULATOR = bool(_numba_config.ENABLE_CUDASIM)


@dataclass(frozen=True)
class Geometry:
    """Tile sizes and memory budgets of the kernels."""

    #: A GEMM-form block is ``block x block`` threads ...
    block: int
    #: ... each computing ``micro x micro`` outputs, so a tile is ``block * micro`` square.
    micro: int
    #: Threads per block of the row-wise kernels (one thread a row).
    row_threads: int
    #: Partials summed in order by one thread per level of a final reduction.
    span: int
    #: Most entries of a ``(rows, k)`` scratch chunk of distances/responsibilities.
    chunk_entries: int
    #: Most float64 entries of the per-segment partial sums of one pass.
    partial_entries: int
    #: Fewest rows a segment is given.
    min_segment_rows: int

    @property
    def tile(self) -> int:
        return self.block * self.micro


GPU = Geometry(
    block=16,
    micro=4,
    row_threads=128,
    span=256,
    chunk_entries=1 << 26,
    partial_entries=1 << 25,
    min_segment_rows=2048,
)
SIM = Geometry(
    block=2,
    micro=2,
    row_threads=4,
    span=3,
    chunk_entries=64,
    partial_entries=256,
    min_segment_rows=8,
)
GEOMETRY = SIM if SIMULATOR else GPU

#: Module-level copies, frozen into the kernels when they are compiled.
BLOCK = GEOMETRY.block
MICRO = GEOMETRY.micro
TILE = GEOMETRY.tile
DEPTH = GEOMETRY.block  # features per shared-memory stage of a GEMM-form tile
ROW_THREADS = GEOMETRY.row_threads
SPAN = GEOMETRY.span


#: Largest grid extent along y and z.
MAX_GRID_Z = 65535


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative integers."""
    return -(-a // b)


def chunk_rows(n: int, k: int) -> int:
    """Rows of one scratch chunk: a multiple of the tile, at most ``n`` rounded up."""
    rows = max(TILE, (GEOMETRY.chunk_entries // max(k, 1)) // TILE * TILE)
    return min(rows, cdiv(n, TILE) * TILE)


def n_segments(rows: int, width: int) -> int:
    """Segments of ``rows`` rows whose partial sums hold ``width`` float64 each."""
    by_rows = cdiv(rows, GEOMETRY.min_segment_rows)
    by_memory = max(1, GEOMETRY.partial_entries // max(width, 1))
    return max(1, min(by_rows, by_memory, MAX_GRID_Z))
