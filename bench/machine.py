"""The machine and its load, as one header line for the benchmark tables."""

from __future__ import annotations

import os
import platform


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (the platform's name elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_1min() -> float:
    """The 1-minute load average (NaN where the OS has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return float("nan")


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def versions() -> str:
    """numpy, numba and scikit-learn versions."""
    import numba
    import numpy
    import sklearn

    return (
        f"numpy {numpy.__version__}, numba {numba.__version__}, scikit-learn {sklearn.__version__}"
    )


def numba_threads() -> str:
    """numba's thread count and whether ``NUMBA_NUM_THREADS`` set it."""
    import numba

    env = os.environ.get("NUMBA_NUM_THREADS", "unset")
    return f"NUMBA_NUM_THREADS {numba.config.NUMBA_NUM_THREADS} (environment: {env})"


def header(threading_layer: str, load_before: float, load_after: float) -> str:
    """One markdown line naming the machine, the versions and the load."""
    return (
        f"Machine: nproc {os.cpu_count()} (usable {usable_cpus()}), {cpu_model()}; "
        f"{versions()}; {numba_threads()}, numba threading layer {threading_layer}; "
        f"1-min load average {load_before:.2f} before, {load_after:.2f} after."
    )
