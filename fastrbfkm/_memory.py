"""Out of memory outside the kernels' calls (:mod:`fastrbfkm._kernels.memory`
explains those): a ``MemoryError`` that says what was being done, and how
big, rather than an ``OSError`` or numpy's message alone.

- Loading numba's compiler library (``libllvmlite.so``, 170 MiB of
  mappings) fails with an ``OSError`` ("Could not find/load shared object
  file"), scipy's OpenBLAS with an ``ImportError`` ("failed to map segment
  from shared object"), an extension module's initialisation with a
  ``SystemError`` ("error return without exception set") and Python's own
  unmarshalling with a bare ``MemoryError``, when the address-space limit
  (``ulimit -v``) leaves no room for them: the package's first use (``from
  fastrbfkm import RBFKMeans``, which loads them) then raises
  :func:`import_failure`'s ``MemoryError`` instead.
- A fit's own arrays (numpy's ``MemoryError``, which gives the array's size
  and shape) are re-raised by :func:`explains_memory` naming the fit and its
  data, and the address space left under a limit.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import sys
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def _address_space() -> tuple[int, int] | None:
    """``(limit, in use)`` bytes under ``RLIMIT_AS``, None without a limit
    (as :func:`fastrbfkm._kernels.memory.address_space`, which this module
    cannot import before numba loads)."""
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


def _llvmlite_size() -> int:
    """Bytes of numba's compiler library, ``libllvmlite``, on disk (0 if not found)."""
    spec = importlib.util.find_spec("llvmlite")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        binding = os.path.join(folder, "binding")
        for name in sorted(os.listdir(binding)) if os.path.isdir(binding) else []:
            if name.startswith("libllvmlite"):
                return os.path.getsize(os.path.join(binding, name))
    return 0


#: The compiled libraries a public name's first use loads (through numba,
#: scipy and scikit-learn).
LOADED_FIRST = ("numba", "scipy.special", "sklearn")


def _room(size: int) -> int:
    """Bytes of address space that loading :data:`LOADED_FIRST` takes at
    most (380 MiB mapped here, with numba's compiler library of ``size``
    bytes, 170 MiB of them): twice that library and 64 MiB."""
    return 2 * size + (64 << 20)


def loading_failure(module: str) -> MemoryError | None:
    """Before the package's ``module`` is first imported: the
    ``MemoryError`` to raise when the address-space limit leaves less room
    than loading :data:`LOADED_FIRST` takes (with 80-140 MiB left,
    scipy's OpenBLAS retried a failing ``mmap`` forever inside ``import
    scipy.special``: a hang); None when they are loaded or the room is
    there."""
    if all(name in sys.modules for name in LOADED_FIRST):
        return None
    space = _address_space()
    if space is None:
        return None
    limit, used = space
    size = _llvmlite_size()
    if limit - used >= _room(size):
        return None
    return _out_of_memory(module, limit, used, size, "there is not room enough to load them")


def import_failure(module: str, exc: BaseException) -> MemoryError | None:
    """The ``MemoryError`` to raise for ``exc``, an ``ImportError``,
    ``OSError``, ``SystemError`` or ``MemoryError`` importing the package's
    ``module``, when it comes from a shared library that could not be
    mapped, or an allocation that failed, under the address-space limit;
    None when it is not that (an ``ImportError`` or ``OSError`` that names
    no shared object, or room enough left)."""
    space = _address_space()
    text = str(exc)
    allocation = isinstance(exc, (SystemError, MemoryError))
    if space is None or not (allocation or "shared object" in text):
        return None
    limit, used = space
    size = _llvmlite_size()
    if limit - used >= _room(size):
        return None  # room enough: another cause
    found = re.search(r"([\w.+-]+\.so\b[\w.]*)", text)
    what = f"{found.group(1)} could not be mapped" if found else "an allocation failed"
    first = (text.splitlines() or ["no message"])[0][:120]
    return _out_of_memory(module, limit, used, size, f"{what} ({type(exc).__name__}: {first})")


def _out_of_memory(module: str, limit: int, used: int, size: int, what: str) -> MemoryError:
    return MemoryError(
        f"fastrbfkm: out of memory loading {module} (numba, scipy and their compiled "
        f"libraries): {what} under the address-space limit of {limit / 2**20:.0f} MiB "
        f"(ulimit -v {limit // 1024}), {used / 2**20:.0f} MiB of it in use, "
        f"{(limit - used) / 2**20:.0f} MiB left; numba's compiler library alone (libllvmlite) "
        f"maps {size / 2**20:.0f} MiB and loading them all about {_room(size) / 2**20:.0f} MiB. "
        "Raise the limit, or import fastrbfkm before loading the data."
    )


def explains_memory(fit: F) -> F:
    """Decorator for an estimator's ``fit``/``partial_fit``: a
    ``MemoryError`` not already explained by the kernels' is re-raised
    naming the estimator, its data's shape and the address space left."""

    @functools.wraps(fit)
    def wrapper(self, X, *args, **kwargs):
        from ._kernels.memory import first_buffers

        try:
            # the BLAS buffers of the fit's products, mapped while they fit
            first_buffers(f"{type(self).__name__}.{fit.__name__}")
            return fit(self, X, *args, **kwargs)
        except MemoryError as exc:
            if getattr(exc, "explained", False):
                raise
            shape = getattr(X, "shape", None)
            dtype = getattr(X, "dtype", "")
            data = f"{' x '.join(map(str, shape))} {dtype} data" if shape else "its data"
            space = _address_space()
            where = ""
            if space is not None:
                limit, used = space
                where = (
                    f"; the address space is limited to {limit / 2**20:.1f} MiB (ulimit -v "
                    f"{limit // 1024}), {used / 2**20:.1f} MiB of it in use"
                )
            error = MemoryError(
                f"fastrbfkm: {type(self).__name__}.{fit.__name__} ran out of memory on {data}: "
                f"{exc or 'an allocation failed'}{where}."
            )
            error.explained = True
            raise error from exc

    return wrapper  # type: ignore[return-value]
