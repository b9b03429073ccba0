"""Kernel calls in a child process forked after the parent started threads.

GNU OpenMP cannot run a parallel region in a process forked from one that
already ran one: numba's OpenMP layer then kills the child ("Terminating:
fork() called from a process already using GNU OpenMP"), whatever its thread
count. PyTorch's ``DataLoader`` workers, ``multiprocessing`` pools and Dask's
process workers are such children on Linux, where ``fork`` is the default.

So a process that finds itself forked from a parent whose numba threads had
started runs every kernel through its *serial twin*: the same Python
function compiled without ``parallel`` (``prange`` becomes ``range``, the
rows are cut into the same chunks and their partial sums combined in the
same order, so results are bit-for-bit those of the parallel kernel). The
twin has a name of its own, so numba caches it next to the parallel kernel
instead of over it; it is compiled (or loaded from the cache) at its first
call in a child. A child forked before the parent started its threads, or
from a parent that never ran a kernel, keeps the parallel kernels.
"""

from __future__ import annotations

import functools
import os
import types
from collections.abc import Callable

import numba
from numba.core.dispatcher import Dispatcher

_forked_after_threads = False


def _threads_started() -> bool:
    from numba.np.ufunc import parallel

    return bool(parallel._is_initialized)


def _after_fork_in_child() -> None:
    global _forked_after_threads
    _forked_after_threads = _forked_after_threads or _threads_started()


os.register_at_fork(after_in_child=_after_fork_in_child)


@functools.cache
def serial_twin(dispatcher) -> Callable:
    """``dispatcher``'s Python function compiled without ``parallel``, under
    the name ``<name>_serial`` (its own numba cache entry), other options kept
    (every kernel is cached, and ``cache`` is not among ``targetoptions``).
    Parallel kernels it calls are replaced by their serial twins."""
    func = dispatcher.py_func
    namespace = dict(func.__globals__)
    for name in func.__code__.co_names:
        value = namespace.get(name)
        if isinstance(value, Dispatcher) and value.targetoptions.get("parallel"):
            namespace[name] = serial_twin(value)
    twin = types.FunctionType(
        func.__code__, namespace, func.__name__, func.__defaults__, func.__closure__
    )
    twin.__qualname__ = f"{func.__qualname__}_serial"
    twin.__module__ = func.__module__
    twin.__doc__ = func.__doc__
    options = dict(dispatcher.targetoptions)
    options.pop("nopython", None)  # njit implies it, and warns when given
    options["parallel"] = False
    return numba.njit(cache=True, **options)(twin)


def serial_after_fork(run: Callable, dispatcher) -> Callable:
    """``run`` (which calls the parallel ``dispatcher``), except in a child
    forked after threads started, where the serial twin runs instead."""

    @functools.wraps(run)
    def call(*args):
        if _forked_after_threads:
            return serial_twin(dispatcher)(*args)
        return run(*args)

    call.kernel = dispatcher
    return call
