"""How many threads a kernel call uses: one for small passes.

A parallel region costs a wake-up and a barrier: tens of microseconds on a
quiet machine, but a scheduler time slice (milliseconds) whenever another
process keeps a core busy, because the region ends only when its slowest
thread has been scheduled. A fit makes hundreds of passes, so small fits on a
busy machine took 10-70x longer with numba's threads than without. A pass
whose work is small therefore runs on the calling thread alone: numba's
thread limit is lowered to 1 for that call (a per-thread setting, restored
afterwards; a limit the caller set with ``numba.set_num_threads`` is only
ever lowered). Whether a pass is small depends only on its shape, and the
kernels' results never depend on the number of threads.

The limit is set from Python around the call because numba cannot cache a
compiled function that calls ``set_num_threads`` itself.

Larger passes still run in parallel, and their threads must not burn a busy
core while they wait: GNU OpenMP's workers spin at every barrier unless
``OMP_WAIT_POLICY=PASSIVE``, which on a loaded machine made a 100000 x 16
fit 10-20x slower than on one thread. Unless the user set the variable,
numba's threads are started (at the first kernel call, not at import) with
``OMP_WAIT_POLICY=PASSIVE`` in the environment, which is restored right
after: GNU OpenMP reads it once, when numba loads it. Set
``OMP_WAIT_POLICY=ACTIVE`` to keep spinning threads (a few microseconds
less per pass on a quiet machine).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import numba

from .chunks import MIN_CHUNK_ROWS

#: Calls with less work than this (rows times multiply-adds per row: about
#: a millisecond on one core) run on one thread.
SERIAL_WORK = 1 << 22


def is_small(n: int, row_work: int) -> bool:
    """Whether a pass over ``n`` rows of ``row_work`` multiply-adds each runs
    on one thread: its work is small, or it has a single chunk of rows."""
    return n < 2 * MIN_CHUNK_ROWS or n * row_work < SERIAL_WORK


@functools.lru_cache(maxsize=1)
def start_threads() -> None:
    """Start numba's threading layer, with passive OpenMP waiting unless the
    user chose a wait policy (the environment is restored afterwards)."""
    chosen = "OMP_WAIT_POLICY" in os.environ
    if not chosen:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        numba.get_num_threads()  # loads the threading layer and starts its threads
    finally:
        if not chosen:
            del os.environ["OMP_WAIT_POLICY"]


def serial_when_small(size: Callable[..., tuple[int, int]]):
    """Decorator for a parallel kernel: run it on the calling thread alone
    when ``size(*args)``, its ``(rows, work per row)``, :func:`is_small`."""

    def wrap(kernel):
        @functools.wraps(kernel)
        def run(*args):
            start_threads()
            if not is_small(*size(*args)):
                return kernel(*args)
            previous = numba.get_num_threads()
            numba.set_num_threads(1)
            try:
                return kernel(*args)
            finally:
                numba.set_num_threads(previous)

        run.kernel = kernel  # the compiled dispatcher itself
        return run

    return wrap
