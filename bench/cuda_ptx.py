"""Compile every CUDA kernel of fastrbfkm to PTX, without a GPU.

Usage: ``NUMBA_ENABLE_CUDASIM=0 python bench/cuda_ptx.py [--cc 9.0]``

The simulator runs the kernels as Python, so it does not see what only the
CUDA target rejects (typing, unsupported calls); compiling for a real
architecture does. Needs NVVM (a CUDA toolkit, or numba-cuda's ``cu12``
extra), not a GPU.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def signatures(dtype):
    from numba import typeof
    from numba.core import types

    from fastrbfkm.cuda import assignment, distances, reduce, seeding, sums

    f = typeof(np.zeros((2, 2), dtype))  # C-contiguous 2-D, X's dtype
    fa = types.Array(typeof(np.zeros(2, dtype)).dtype, 2, "A")
    v = typeof(np.zeros(2, dtype))
    va = types.Array(v.dtype, 1, "A")
    f64 = typeof(np.zeros(2))
    f64_2 = typeof(np.zeros((2, 2)))
    i32 = typeof(np.zeros(2, np.int32))
    i64 = typeof(np.zeros(2, np.int64))
    n, x = types.int64, types.float64
    kern_d = distances.kernels(np.dtype(dtype).name)
    kern_s = sums.kernels(np.dtype(dtype).name)
    return [
        (distances.row_norms, (f, v, f64)),
        (kern_d.distances, (f, n, n, f, v, f64, v, f)),
        (kern_d.nearest, (f, f, v, f64, v, f64, i32, va, va, f64_2)),
        (assignment.assign_rows, (f, n, n, x, x, n, f64, f, types.boolean, f64_2, n)),
        (kern_s.weighted_sums, (f, n, n, f, n, f64_2)),
        (sums.label_sums, (f, i32, f64, f, n, n, f64_2)),
        (sums.label_sums, (fa, i32, f64, f, n, n, f64_2)),
        (sums.label_sums, (f, i32, f64, f64_2, n, n, f64_2)),
        (sums.soft_scatter, (f, n, n, f, f, f64, n, n, f64_2)),
        (reduce.fold, (f64_2, i32, f64_2)),
        (reduce.fold_argmax, (va, i64, v, i64)),
        (reduce.ranges, (f, f64_2)),
        (reduce.ranges_1d, (v, f64_2)),
        (reduce.gather_rows, (f, i64, f)),
        (reduce.set_values, (va, i64, x)),
        (reduce.fill, (f64_2, x)),
        (distances.square_root, (f,)),
        (seeding.start_closest, (f, n, f64)),
        (seeding.update_closest, (f, n, f64)),
        (seeding.masses, (f64, f64, types.boolean, f64)),
        (seeding.segment_totals, (f64, f64)),
        (seeding.trial_potentials, (f, f64, f64, i64, n, f64_2)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cc", default="9.0", help="compute capability, e.g. 8.0 or 9.0")
    args = parser.parse_args()
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") != "0":
        raise SystemExit("run with NUMBA_ENABLE_CUDASIM=0: the simulator compiles nothing")
    from types import SimpleNamespace

    from numba import cuda
    from numba.cuda import dispatcher

    cc = tuple(int(p) for p in args.cc.split("."))
    # Device functions are compiled for "the current device": with no GPU
    # there is none, so name the architecture here.
    dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)
    for dtype in (np.float32, np.float64):
        for kernel, sig in signatures(dtype):
            start = time.perf_counter()
            ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc)
            name = kernel.py_func.__name__
            print(
                f"{np.dtype(dtype).name:8s} {name:16s} {len(ptx):8d} chars of PTX "
                f"({time.perf_counter() - start:.1f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
