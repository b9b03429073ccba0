"""Ctrl-C during a kernel call: a ``KeyboardInterrupt`` after the call.

A SIGINT that arrives while a compiled kernel runs makes Python's handler set
``KeyboardInterrupt`` inside numba's dispatcher, which then returns a result
with an exception set: the user saw a ``SystemError``. While a kernel runs on
the main thread with Python's default SIGINT handler in place, SIGINT only
records that it came; when the kernel returns, the default handler is back
and the interrupt is raised as ``KeyboardInterrupt``. A kernel call lasts a
pass over the data, so a fit stops within about that. A handler the user
installed (or an ignored SIGINT) is left alone, as are calls from other
threads, where handlers cannot be changed.
"""

from __future__ import annotations

import functools
import signal
import threading
from collections.abc import Callable


def deferring_interrupts(kernel: Callable) -> Callable:
    """Wrap ``kernel`` so that Ctrl-C during it raises ``KeyboardInterrupt``
    when it returns. ``.kernel`` is the compiled dispatcher."""

    @functools.wraps(kernel)
    def run(*args):
        if (
            threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        ):
            return kernel(*args)
        received = []
        signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
        try:
            result = kernel(*args)
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        if received:
            raise KeyboardInterrupt
        return result

    run.kernel = getattr(kernel, "kernel", kernel)
    return run
