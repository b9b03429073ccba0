"""A user's first fit of each kind of input, each in a fresh process.

Usage::

    python bench/first_fit.py                     # after `python -m fastrbfkm compile`
    python bench/first_fit.py --repeats 7 --kinds csr dask
    python bench/first_fit.py --warm-up           # also time the compile command cold

Each run is a new Python process that imports numpy, scikit-learn and
fastrbfkm (and scipy, dask or torch where the kind uses them), makes its
data, and then times one first fit of that kind from the moment the imports
are done to the fitted result (:data:`SCRIPT`: 30000 x 16 blobs with
k = 8 and the default fit unless the kind says otherwise), counting the
kernels numba compiled meanwhile. After ``python -m fastrbfkm compile`` none
should compile anything; with an empty ``NUMBA_CACHE_DIR`` (``--cold``) every
run pays the compiler. ``--warm-up`` first times ``python -m fastrbfkm
compile`` itself from an empty cache folder (its per-kind lines go to
stderr), then runs the first fits against the cache it wrote.

The table (markdown, stdout) gives each kind's median, fastest and slowest
time over ``--repeats`` processes and the kernels compiled in the slowest.
``tests/test_compiling.py`` runs the same script to check that first fits
after the warm-up compile nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

#: One first fit: ``python -c SCRIPT KIND`` prints ``{"seconds", "compiled"}``
#: (the fit's time after the imports, the fastrbfkm kernels numba compiled).
SCRIPT = """
import json, os, sys, tempfile, time
import numpy as np
import sklearn.cluster
from numba.core import event
import fastrbfkm as fk
from fastrbfkm import MiniBatchRBFKMeans, RBFKMeans
from fastrbfkm.datasets import make_blobs

kind = sys.argv[1]
if kind == "csr":
    from scipy import sparse
    M = sparse.random(30000, 300, density=0.02, format="csr", random_state=0)  # 0.45 s: not timed
elif kind == "dask":
    import dask.array as da
elif kind == "torch":
    import torch
    from fastrbfkm.torch import RBFKMeansLayer
compiled = event.RecordingListener()
event.register("numba:compile", compiled)
X = make_blobs(30000, centers=8, n_features=16, random_state=0)[0]
start = time.perf_counter()
if kind == "float64":
    RBFKMeans(8).fit(X).predict(X)
elif kind == "float32":
    RBFKMeans(8).fit(X.astype(np.float32)).predict_proba(X)
elif kind == "int64":
    RBFKMeans(8).fit((10 * X).astype(np.int64))
elif kind == "many":  # MANY_CLUSTERS centers: the swap search moves many a round
    RBFKMeans(128).fit(X[:5000].astype(np.float32))
elif kind == "wide":  # principal axes by Lanczos iterations
    RBFKMeans(4).fit(make_blobs(3000, centers=4, n_features=200, random_state=0)[0])
elif kind == "read-only":
    X.flags.writeable = False
    RBFKMeans(8, assignment="hard").fit(X)
elif kind == "csr":
    RBFKMeans(8).fit(M).predict(M)
elif kind == "memmap":
    from sklearn import config_context
    path = os.path.join(tempfile.mkdtemp(), "X.npy")
    np.save(path, X.astype(np.float32))
    with config_context(working_memory=1):  # streamed, not loaded
        RBFKMeans(8).fit(np.load(path, mmap_mode="r"))
elif kind == "dask":
    RBFKMeans(8).fit(da.from_array(X, chunks=10000))
elif kind == "minibatch":
    MiniBatchRBFKMeans(8).fit(X).partial_fit(X[:1000])
elif kind == "torch":
    codes = torch.as_tensor(X[:2000], dtype=torch.float32).requires_grad_()
    layer = RBFKMeansLayer(n_clusters=8, n_features=16, sigma=1.0, assignment="entmax15")
    layer.init_from(codes.detach())
    (layer.loss(codes) + layer(codes)[:, 0].sum()).backward()
seconds = time.perf_counter() - start
names = sorted({
    getattr(e.data["dispatcher"], "py_func", e.data["dispatcher"]).__qualname__
    for _, e in compiled.buffer
    if e.is_start and e.data.get("dispatcher") is not None
})
print(json.dumps({"seconds": seconds, "compiled": names}))
"""

#: Kinds and the optional package each needs.
KINDS = {
    "float64": None,
    "float32": None,
    "int64": None,
    "many": None,
    "wide": None,
    "read-only": None,
    "csr": None,
    "memmap": None,
    "dask": "dask",
    "minibatch": None,
    "torch": "torch",
}


#: Where the processes start: a folder that holds no module which could
#: shadow a package (``python -c`` and ``-m`` put it first on ``sys.path``;
#: this folder's ``sparse.py`` would hide the package dask imports).
ELSEWHERE = tempfile.gettempdir()


def first_fit(kind: str, env: dict[str, str] | None = None) -> dict:
    """One fresh process's first fit of ``kind``: ``{"seconds", "compiled"}``."""
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, kind],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=ELSEWHERE,
        timeout=3600,
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def warm_up(env: dict[str, str]) -> float:
    """Seconds of ``python -m fastrbfkm compile`` (its lines to stderr)."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "fastrbfkm", "compile"],
        check=True,
        env=env,
        cwd=ELSEWHERE,
        stdout=sys.stderr,
    )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    import importlib.util

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS))
    parser.add_argument("--repeats", type=int, default=5)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--cold", action="store_true", help="an empty numba cache for every run")
    mode.add_argument(
        "--warm-up", action="store_true", help="time the compile command from an empty cache first"
    )
    args = parser.parse_args(argv)
    from machine import header, load_1min

    load_before = load_1min()
    kinds = [k for k in args.kinds if KINDS[k] is None or importlib.util.find_spec(KINDS[k])]
    with tempfile.TemporaryDirectory() as empty:
        env = dict(os.environ)
        lines = []
        if args.warm_up:
            env["NUMBA_CACHE_DIR"] = empty
            seconds = warm_up(env)
            lines.append(f"`python -m fastrbfkm compile` from an empty cache: {seconds:.1f} s\n")
        rows = []
        for kind in kinds:
            runs = []
            for _ in range(args.repeats):
                if args.cold:
                    with tempfile.TemporaryDirectory() as cache:
                        runs.append(first_fit(kind, {**env, "NUMBA_CACHE_DIR": cache}))
                else:
                    runs.append(first_fit(kind, env))
                print(f"{kind}: {runs[-1]['seconds']:.2f} s", file=sys.stderr, flush=True)
            times = [r["seconds"] for r in runs]
            slowest = max(runs, key=lambda r: r["seconds"])
            rows.append(
                f"| {kind} | {statistics.median(times):.2f} | {min(times):.2f} | "
                f"{max(times):.2f} | {len(slowest['compiled'])} |"
            )
    print(header("of the fits' own processes", load_before, load_1min()))
    print()
    print(*lines, sep="")
    cache = "an empty cache each run" if args.cold else "the cache as it is"
    print(f"First fit of each kind, fresh processes, {cache}, {args.repeats} runs:\n")
    print("| kind | median s | fastest s | slowest s | kernels compiled (slowest) |")
    print("|---|---|---|---|---|")
    print(*rows, sep="\n")


if __name__ == "__main__":
    main()
