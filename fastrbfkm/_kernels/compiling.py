"""One line on stderr when numba compiles a kernel instead of loading it from
its on-disk cache (``cache=True``): a first fit on a new machine, a new
numba or Python version, or a new dtype compiles for tens of seconds, which
should not look like a hang. Loading from the cache prints nothing."""

from __future__ import annotations

import sys

from numba.core import event

MESSAGE = "fastrbfkm: compiling kernels (first run only)..."


class _Announcer(event.Listener):
    """Prints :data:`MESSAGE` at the first compilation of a fastrbfkm kernel
    in this process (numba's ``numba:compile`` event fires on cache misses
    only)."""

    def __init__(self) -> None:
        self.said = False

    def on_start(self, ev) -> None:
        if self.said:
            return
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if (getattr(func, "__module__", None) or "").startswith("fastrbfkm."):
            self.said = True
            print(MESSAGE, file=sys.stderr, flush=True)

    def on_end(self, ev) -> None:
        pass


_ANNOUNCER = _Announcer()


def announce_compilation() -> None:
    """Register the announcer with numba's events (once per process)."""
    if not getattr(_ANNOUNCER, "registered", False):
        event.register("numba:compile", _ANNOUNCER)
        _ANNOUNCER.registered = True
