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
core while they wait: GNU OpenMP's workers spin at every barrier for
``GOMP_SPINCOUNT`` rounds (300000 by default) before they sleep, which on a
loaded machine can make a fit many times slower than on one thread. Not
spinning at all (``OMP_WAIT_POLICY=PASSIVE``) costs the opposite: a sleeping
worker can take milliseconds to wake on a virtual machine, and each pass
starts by waking one, so on a quiet machine every parallel pass of a fit
pays that wake-up (the measurements are in the documentation's performance
page, "On a busy machine"). Unless the user set ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT``,
numba's threads are therefore started (at the first kernel call, not at
import) with ``GOMP_SPINCOUNT`` = :data:`SPIN_COUNT` in the environment,
which is restored right after (GNU OpenMP reads it once, when numba loads
it): waiting workers spin for well under a millisecond, which bridges the
gaps between the passes of a fit, then sleep. ``OMP_WAIT_POLICY=ACTIVE``
keeps them spinning; ``OMP_WAIT_POLICY=PASSIVE`` never spins.
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


#: Rounds a waiting OpenMP worker spins before it sleeps (libgomp's default
#: is 300000; a round is a ``pause`` instruction, tens of nanoseconds).
SPIN_COUNT = 1000


@functools.lru_cache(maxsize=1)
def start_threads() -> None:
    """Start numba's threading layer, with briefly spinning OpenMP waits
    unless the user chose a wait policy or a spin count (the environment is
    restored afterwards)."""
    chosen = "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ
    if not chosen:
        os.environ["GOMP_SPINCOUNT"] = str(SPIN_COUNT)
    try:
        numba.get_num_threads()  # loads the threading layer and starts its threads
    finally:
        if not chosen:
            del os.environ["GOMP_SPINCOUNT"]


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
