"""Out of memory outside the kernels' calls (:mod:`fastrbfkm._kernels.memory`
explains those): a ``MemoryError`` that says what was being done, and how
big, rather than an ``OSError`` or numpy's message alone.

- Loading numba's compiler library (``libllvmlite.so``, 170 MiB of
  mappings) fails with an ``OSError`` ("Could not find/load shared object
  file"), and scipy's OpenBLAS with an ``ImportError`` ("failed to map
  segment from shared object"), when the address-space limit (``ulimit
  -v``) leaves no room for them: the package's first use (``from fastrbfkm
  import RBFKMeans``, which loads them) then raises
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


def import_failure(module: str, exc: ImportError | OSError) -> MemoryError | None:
    """The ``MemoryError`` to raise for ``exc``, an ``OSError`` or
    ``ImportError`` importing the package's ``module``, when it is a shared
    library that could not be mapped under the address-space limit; None
    when it is not that."""
    space = _address_space()
    text = str(exc)
    if space is None or "shared object" not in text:
        return None
    limit, used = space
    size = _llvmlite_size()
    if limit - used >= 2 * size + (64 << 20):
        return None  # room enough: another cause
    found = re.search(r"([\w.+-]+\.so\b[\w.]*)", text)
    library = found.group(1) if found else "a shared library"
    return MemoryError(
        f"fastrbfkm: out of memory loading {module} (numba, scipy and their compiled "
        f"libraries): {library} could not be mapped under the address-space limit of "
        f"{limit / 2**20:.0f} MiB (ulimit -v {limit // 1024}), {used / 2**20:.0f} MiB of it in "
        f"use, {(limit - used) / 2**20:.0f} MiB left; numba's compiler library alone "
        f"(libllvmlite) maps {size / 2**20:.0f} MiB ({exc.__class__.__name__}: "
        f"{text.splitlines()[0][:120]}). Raise the limit, or import fastrbfkm before "
        "loading the data."
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
