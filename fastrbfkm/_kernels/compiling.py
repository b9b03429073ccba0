"""One line on stderr when numba compiles a kernel instead of loading it from
its on-disk cache (``cache=True``): a first fit on a new machine, a new
numba or Python version, or a new kind of input (float32 or float64, arrays
or CSR matrices) compiles for tens of seconds, which should not look like a
hang. The line names the kind and the command that compiles every kind
ahead (``python -m fastrbfkm compile``). Loading from the cache prints
nothing."""

from __future__ import annotations

import sys
import threading

from numba import types
from numba.core import event

MESSAGE = "fastrbfkm: compiling kernels"
ADVICE = (
    "(first use of this kind of input only, 20 s to 2 min; "
    "'python -m fastrbfkm compile' compiles every kind ahead)..."
)


def kind_of(args) -> str | None:
    """The kind of input a kernel is compiled for, from the numba type of its
    first argument (the data); None when that is not the data."""
    first = args[0] if args else None
    if isinstance(first, types.Array) and first.ndim == 2:
        return f"{first.dtype} arrays"
    if isinstance(first, types.BaseTuple) and "CSR" in str(first):
        data = next((t for t in first.types if isinstance(t, types.Array)), None)
        return f"{data.dtype} CSR matrices" if data is not None else None
    return None


#: The kind of the data the kernels last worked on, per thread
#: (:func:`note_data`): what a compilation is for, even of a kernel that
#: sees only the centers (float64 for float32 data, say).
_DATA = threading.local()


def note_data(kind: str) -> None:
    """Record the kind of the data (``"float32 arrays"``, ``"float64 CSR
    matrices"``) that the kernels about to run in this thread work for; the
    announcement names it rather than the compiled kernel's own first
    argument. Set at every call of a data kernel, it stays until the next."""
    _DATA.kind = kind


class _Announcer(event.Listener):
    """Prints :data:`MESSAGE`, the kind of input and :data:`ADVICE` at the
    first compilation of a fastrbfkm kernel for each kind in this process
    (numba's ``numba:compile`` event fires on cache misses only). The kind
    is the data's (:func:`note_data`), else the kernel's first argument's."""

    def __init__(self) -> None:
        self.said: set[str] = set()

    def on_start(self, ev) -> None:
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if not (getattr(func, "__module__", None) or "").startswith("fastrbfkm."):
            return
        kind = getattr(_DATA, "kind", None)
        if kind is None:
            try:
                kind = kind_of(ev.data.get("args") or ())
            except Exception:  # never let the announcement break a compilation
                kind = None
        if kind is None and self.said:
            return  # a helper of a kind already announced
        kind = kind or "a new kind of input"
        if kind not in self.said:
            self.said.add(kind)
            print(f"{MESSAGE} for {kind} {ADVICE}", file=sys.stderr, flush=True)

    def on_end(self, ev) -> None:
        pass


_ANNOUNCER = _Announcer()


def announce_compilation() -> None:
    """Register the announcer with numba's events (once per process)."""
    if not getattr(_ANNOUNCER, "registered", False):
        event.register("numba:compile", _ANNOUNCER)
        _ANNOUNCER.registered = True
