"""numba.cuda twins of the CPU kernels, behind ``backend="cuda"``.

This package imports ``numba.cuda``; nothing imports it until a GPU path is
asked for (``import fastrbfkm`` never does). On a machine with an NVIDIA
GPU it needs ``numba-cuda`` (``pip install "fastrbfkm[cuda]"``).

Where it runs:

- :func:`is_available` is True only for a real GPU that numba-cuda can use;
  ``backend="auto"`` only ever picks the GPU then (or for CUDA array input).
- With ``NUMBA_ENABLE_CUDASIM=1`` (set before numba is first imported),
  numba.cuda is its CPU simulator: ``backend="cuda"`` then runs these same
  kernels, one Python thread per GPU thread, with tiny tiles
  (:mod:`.config`). It is for testing: very slow, and never chosen by
  ``"auto"``.
- Otherwise ``backend="cuda"`` raises a RuntimeError that says what is
  missing.
"""

from __future__ import annotations

import functools
import importlib.util

from numba import cuda

from .config import SIMULATOR

__all__ = ["is_available", "require", "simulator_enabled"]


def simulator_enabled() -> bool:
    """Whether numba.cuda is the CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return SIMULATOR


def _numba_cuda_installed() -> bool:
    return importlib.util.find_spec("numba_cuda") is not None


@functools.cache
def _gpu_status() -> str:
    """Empty when a real GPU is usable, else why not."""
    if SIMULATOR:
        return "numba.cuda is the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    if not _numba_cuda_installed():
        return "numba-cuda is not installed: pip install 'fastrbfkm[cuda]'"
    try:
        if cuda.is_available():
            return ""
    except Exception as exc:  # a broken driver or toolkit: report it, do not crash "auto"
        return f"numba.cuda failed to find a GPU: {exc}"
    return "numba.cuda found no usable NVIDIA GPU and driver"


def is_available() -> bool:
    """Whether a real CUDA GPU is usable (never true under the simulator)."""
    return _gpu_status() == ""


def require() -> None:
    """Raise a RuntimeError saying what is missing unless ``backend="cuda"``
    can run (a real GPU, or the simulator when it is switched on)."""
    if SIMULATOR:
        return
    status = _gpu_status()
    if status:
        raise RuntimeError(f"backend='cuda' cannot run: {status}. Use backend='cpu' or 'auto'.")
