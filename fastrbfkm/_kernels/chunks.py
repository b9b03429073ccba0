"""Fixed row partition shared by every parallel kernel.

Rows are split into chunks that depend only on the problem's shape, never on
the number of threads. Each chunk is processed in order by one thread and its
partial sums are reduced in chunk order afterwards, so every result is
bit-identical whatever ``NUMBA_NUM_THREADS`` is.
"""

from numba import njit

#: Rows of distances computed together before they are consumed.
BLOCK_ROWS = 256
#: Fewest rows a chunk is given (keeps the per-chunk overhead negligible).
MIN_CHUNK_ROWS = 2048
#: Most chunks: enough to balance many threads, few enough to reduce cheaply.
MAX_CHUNKS = 64
#: Most entries (rows times d) of a block's per-chunk work arrays: rows wider
#: than ``BLOCK_ENTRIES / BLOCK_ROWS`` come in smaller blocks, so that each
#: thread's buffers stay a few MiB whatever d is (wide data).
BLOCK_ENTRIES = 1 << 18
#: Budget, in float64 entries, for all chunks' partial ``(k, d)`` statistics.
PARTIAL_BUDGET = 1 << 22


@njit(cache=True)
def n_chunks(n, stat_size):
    """Number of chunks for ``n`` rows whose partial statistics hold ``stat_size`` floats."""
    by_rows = (n + MIN_CHUNK_ROWS - 1) // MIN_CHUNK_ROWS
    by_memory = max(2, PARTIAL_BUDGET // max(stat_size, 1))
    return max(1, min(MAX_CHUNKS, by_rows, by_memory))


@njit(cache=True)
def block_rows(d):
    """Rows of X worked together: ``BLOCK_ROWS``, fewer for rows of more than
    ``BLOCK_ENTRIES / BLOCK_ROWS`` features (at least one)."""
    return max(1, min(BLOCK_ROWS, BLOCK_ENTRIES // max(d, 1)))


@njit(cache=True)
def chunk_bounds(n, chunks, c):
    """Half-open row range ``[start, stop)`` of chunk ``c`` out of ``chunks``."""
    size = (n + chunks - 1) // chunks
    start = min(n, c * size)
    return start, min(n, start + size)
