"""Out of memory in a kernel call: a ``MemoryError`` that says what was
being allocated and how big, within the call, never a hang.

Two things went wrong under an address-space limit (``ulimit -v``, which
batch systems set; the limit counts every mapping, not the memory used):

- numba's allocator raised a bare ``MemoryError: Allocation failed (probably
  too large)``, saying neither what nor how big. :func:`guarded` re-raises
  it with the kernel, its data's shape and the size of its results and work
  arrays (:func:`footprint` of each kernel), and the address space left.
- The kernels' matrix products call OpenBLAS (scipy's, through numba's
  ``np.dot``), which takes a work buffer (32 MiB, measured with scipy's
  OpenBLAS 0.3.30) from a table it keeps for the process: a free one, or a
  new one when every buffer is in use by another thread at that moment. When
  the ``mmap`` of a new buffer fails, OpenBLAS tries again, forever (about
  42,000 calls a second): a parallel pass in which a second thread needed a
  buffer hung instead of failing. Under a limit, :func:`guarded` therefore
  makes sure before each call that no buffer will be mapped that does not
  fit: the first buffer of scipy's and of numpy's OpenBLAS is mapped ahead
  (:func:`_first_buffers`; a ``MemoryError`` if even that does not fit), and
  a pass runs on its threads only when the address space left holds a new
  buffer for every one of them besides its own arrays, else on the calling
  thread alone, which reuses the first buffer. Without a limit (and off
  Linux, where ``/proc/self/status`` does not say what is mapped) nothing is
  checked; the cost under a limit is one read of that file a call.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

import numba

#: Address space one OpenBLAS work buffer takes until one is measured (32
#: MiB with scipy's OpenBLAS 0.3.30, and numpy's 0.3.31), with a margin:
#: :func:`_first_buffers` measures the first and keeps the larger.
BLAS_BUFFER = 33 << 20
#: Address space a pass's own arrays are allowed besides its estimate
#: (numba's allocator, rounding): below this much to spare, a parallel pass
#: runs on one thread.
SPARE = 8 << 20

_lock = threading.Lock()
#: Which OpenBLAS libraries' first work buffer is known to be mapped.
_mapped = {"scipy": False, "numpy": False}


def address_space() -> tuple[int, int] | None:
    """``(limit, in use)`` in bytes under the process's address-space limit
    (``RLIMIT_AS``); None without a limit or where the mapped size cannot be
    read (not Linux)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    limit, _ = resource.getrlimit(resource.RLIMIT_AS)
    if limit == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return limit, int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def mib(size: float) -> str:
    """``size`` bytes in MiB, as the messages give it."""
    return f"{size / 2**20:.1f} MiB"


def describe_space(space: tuple[int, int] | None) -> str:
    """The address space, for a message: limit, in use and left."""
    if space is None:
        return ""
    limit, used = space
    return (
        f"; the address space is limited to {mib(limit)} (ulimit -v {limit // 1024}), "
        f"{mib(used)} of it in use, {mib(max(limit - used, 0))} left"
    )


def first_buffers(what: str, numpy_too: bool = True) -> None:
    """Map the first work buffer of scipy's OpenBLAS (the one numba's
    ``np.dot`` calls) and, with ``numpy_too``, of numpy's (the fit's
    products in Python), each unless known to be mapped (once a process:
    a product of 256 x 256 matrices each, about a millisecond), while they
    fit under an address-space limit: a ``MemoryError`` naming ``what``
    (the call about to run) if they do not, where OpenBLAS itself would
    retry its ``mmap`` forever (scipy's 0.3.30) or end the process after 10
    tries (numpy's 0.3.31). Without ``numpy_too``, numpy's is mapped when
    there is room for it. Under a limit, the first buffer's size is
    measured."""
    global BLAS_BUFFER
    if all(_mapped.values()):
        return
    with _lock:
        wanted = [name for name, done in _mapped.items() if not done]
        needed = wanted if numpy_too else [name for name in wanted if name == "scipy"]
        space = address_space()
        # without a limit: (2 ** 62, in use), the buffers mapped all the same,
        # so that a limit set later finds them there
        limit, used = space or (1 << 62, 0)
        left = limit - used
        if left < len(needed) * BLAS_BUFFER + SPARE:
            libraries = " and ".join(f"{name}'s" for name in needed)
            plural = "s" if len(needed) > 1 else ""
            error = MemoryError(
                f"fastrbfkm: out of memory before {what}: its matrix products need "
                f"{libraries} BLAS work buffer{plural} (OpenBLAS, about {mib(BLAS_BUFFER)} "
                f"each){describe_space(space)}. Raise the limit or free memory."
            )
            error.explained = True
            raise error
        import numpy as np

        A = np.ones((256, 256))
        if "scipy" in wanted:
            from scipy.linalg import blas

            blas.dgemm(1.0, A, A)  # scipy's OpenBLAS: the one numba's np.dot calls
            after = address_space()
            if space is not None and after is not None:
                BLAS_BUFFER = max(BLAS_BUFFER, after[1] - used)
                used = after[1]
            _mapped["scipy"] = True
        if "numpy" in wanted and limit - used >= BLAS_BUFFER + SPARE:
            A @ A  # numpy's own
            _mapped["numpy"] = True


def guarded(
    name: str, footprint: Callable[..., tuple[str, float, float]]
) -> Callable[[Callable], Callable]:
    """Decorator for a kernel's entry: under an address-space limit, map
    OpenBLAS's first buffers ahead and run on the calling thread alone when
    the space left would not hold a new buffer for each thread; any
    ``MemoryError`` of the call re-raised naming the kernel ``name`` and its
    ``footprint(*args)``: ``(what the data is, bytes of results, bytes of
    work arrays a thread)``."""

    def wrap(run: Callable) -> Callable:
        @functools.wraps(run)
        def call(*args):
            space = address_space()
            try:
                if space is None:
                    first_buffers(f"the kernel {name}", numpy_too=False)  # for a later limit
                    return run(*args)
                return _within(space, run, args, name, footprint)
            except MemoryError as exc:
                if getattr(exc, "explained", False):
                    raise
                data, results, work = footprint(*args)
                threads = numba.get_num_threads()  # started by now
                error = MemoryError(
                    f"fastrbfkm: out of memory in the kernel {name} ({data}, up to {threads} "
                    f"thread{'s' if threads > 1 else ''}): it allocates its results, "
                    f"{mib(results)}, and work arrays of about {mib(work)} a thread"
                    f"{describe_space(address_space())} (numba: {exc})."
                )
                error.explained = True
                raise error from exc

        call.kernel = getattr(run, "kernel", run)
        return call

    return wrap


def _within(space, run, args, name, footprint):
    """``run(*args)`` with no OpenBLAS buffer mapped that does not fit."""
    from .threads import start_threads

    start_threads()  # the threads' own stacks and arenas first
    first_buffers(f"the kernel {name}", numpy_too=False)
    space = address_space() or space
    limit, used = space
    _, results, work = footprint(*args)
    threads = numba.get_num_threads()
    need = results + threads * (work + BLAS_BUFFER) + SPARE
    if threads == 1 or limit - used >= need:
        return run(*args)
    numba.set_num_threads(1)  # the first buffer serves the one thread
    try:
        return run(*args)
    finally:
        numba.set_num_threads(threads)
