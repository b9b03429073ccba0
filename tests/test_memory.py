"""Out of memory under an address-space limit (``ulimit -v``): a
``MemoryError`` that says what was being allocated and how big, soon, on any
thread count; never a hang, a crash or an ``OSError``.

Each case runs in a fresh process that sets its own limit (``RLIMIT_AS``)
from the address space it has mapped just before the call, so that the
cases do not depend on how much the imports map on a given machine. A
timeout far above an honest run catches a hang (OpenBLAS retried a failed
``mmap`` of its work buffer forever inside a parallel pass, and numpy's
OpenBLAS ended the process after 10 tries)."""

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="the address space mapped is read from /proc/self/status (Linux)",
)

#: Far above an honest run (a few seconds): a run that takes it has hung.
TIMEOUT = 300

#: ``LIMIT(extra)``: the process's address space limited to what it maps now
#: plus ``extra`` MiB; the last line printed says how the call ended.
PRELUDE = """
import resource, sys, time
import numpy as np

def LIMIT(extra):
    used = next(int(line.split()[1]) for line in open("/proc/self/status")
                if line.startswith("VmSize:")) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (used + (extra << 20), resource.RLIM_INFINITY))

def RUN(call):
    start = time.perf_counter()
    try:
        call()
        print("ok")
    except MemoryError as exc:
        print(f"MemoryError {time.perf_counter() - start:.1f} s: {exc}")
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}")
"""

#: A default fit of 400000 x 32 float32 rows, k = 8, under the limit
#: (argv: extra MiB), everything imported and run once first.
FIT = (
    PRELUDE
    + """
from fastrbfkm import RBFKMeans
RBFKMeans(3, random_state=0).fit(np.random.default_rng(1).normal(size=(3000, 4)))
X = np.random.default_rng(0).standard_normal((400_000, 32), dtype=np.float32)
LIMIT(int(sys.argv[1]))
RUN(lambda: RBFKMeans(8, random_state=0).fit(X))
"""
)


def run(script: str, *args, threads: int = 2) -> str:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
    )
    lines = out.stdout.strip().splitlines()
    assert out.returncode == 0 and lines, f"status {out.returncode}: {out.stderr[-2000:]}"
    return lines[-1]


#: What an explained MemoryError says: what it was doing, and a size in MiB.
EXPLAINED = re.compile(r"^MemoryError [\d.]+ s: fastrbfkm: .*out of memory .*\d+\.\d MiB")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("extra", [8, 40, 60, 90, 200])
def test_a_fit_under_an_address_space_limit_ends_or_says_what_did_not_fit(extra, threads):
    """With two threads, a second OpenBLAS buffer that did not fit made the
    pass hang; with less room, numpy's OpenBLAS ended the process. Now the
    fit either ends or raises a MemoryError naming what it allocated and
    how big."""
    said = run(FIT, extra, threads=threads)
    assert said == "ok" or EXPLAINED.match(said), said


def test_a_kernels_allocation_that_does_not_fit_names_the_kernel_and_its_size():
    """numba's own message was "Allocation failed (probably too large)"."""
    script = (
        PRELUDE
        + """
import fastrbfkm as fk
X = np.random.default_rng(0).normal(size=(200_000, 2))
C = X[:1000].copy()
fk.responsibilities(X[:100], C, 1.0)
LIMIT(200)
RUN(lambda: fk.responsibilities(X, C, 1.0))  # 200000 x 1000 float64: 1.5 GiB
"""
    )
    said = run(script)
    assert EXPLAINED.match(said), said
    assert "the kernel responsibilities (200000 rows of 2 float64 features, 1000 centers" in said
    assert re.search(r"its results, 152\d\.\d MiB", said) and "ulimit -v" in said


@pytest.mark.parametrize("extra", [0, 10, 20, 40, 60, 80, 140, 300])
def test_loading_numba_under_the_limit_is_a_memory_error(extra):
    """The first use of the package after the data, with no room left for
    numba's compiler library, was an OSError about a shared object file
    that 'could not be found'; with less room, a bare MemoryError from
    Python's unmarshalling, or (seen on CI at 40 MiB) a SystemError from an
    extension module's initialisation, 'error return without exception
    set'; with 80-140 MiB, a hang (scipy's OpenBLAS retrying a failing mmap
    forever)."""
    script = (
        PRELUDE
        + f"""
import fastrbfkm
LIMIT({extra})
RUN(lambda: fastrbfkm.RBFKMeans)
"""
    )
    said = run(script)
    assert said.startswith("MemoryError"), said
    assert re.search(r"out of memory loading fastrbfkm\.estimator \(numba, scipy", said), said
    assert re.search(r"\d+ MiB left; numba's compiler library alone \(libllvmlite\) maps", said)
