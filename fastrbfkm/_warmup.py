"""Compile the kernels ahead of need: ``python -m fastrbfkm compile``.

numba compiles a kernel the first time it is called with a new kind of
argument (float32 or float64, an array or a CSR matrix) and keeps the
machine code in its on-disk cache (``cache=True``): a first fit of each kind
of input waits about a minute on the compiler (61-76 s on 2 cores), and
every later process loads the code in a fraction of a second. This module
runs small fits of every kind the library takes, each entry point and
assignment, so that a user's first fit of real data loads everything from
the cache.

Each kind's fits come in groups (:func:`_arrays` and its siblings return
``(name, fits)`` pairs), and the command prints a line as each kernel called
from Python is compiled and as each group is done, so that a cold cache's
minutes show progress. The fits cover every kernel: from ``MANY_CLUSTERS``
centers on the swap search takes another path, which a fit with that many
runs (``tests/test_compiling.py`` follows every numba dispatcher of the
package from the kernels these fits call).

The in-memory kinds (arrays and CSR matrices), which hold nearly all of
the compiling, run their float32 half in a second process while this one
compiles the float64 half: about 40% less wall time on 2 cores. numba's
cache is not safe when processes save the same kernel's entries at once
(numba issue 4807: both take the same data file's name, and one process
later loads the other's code), so while the two run, every read and write
of the cache's index and data files takes one file lock
(:func:`_serialised_cache`). Where that lock cannot be had (no ``fcntl``,
or a numba whose cache files are laid out otherwise), the kinds compile in
one process, one after another.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from ._model import ASSIGNMENTS

#: The kinds of input, in the order they are compiled.
KINDS = ("arrays", "sparse", "memmap", "dask", "torch")
DTYPES = (np.float64, np.float32)
#: Kinds whose float32 half compiles in a second process at once.
SPLIT_KINDS = ("arrays", "sparse")


def _blobs(dtype, n: int = 3000, d: int = 8, centers: int = 40) -> np.ndarray:
    from .datasets import make_blobs

    return make_blobs(n, centers=centers, n_features=d, random_state=0, dtype=dtype)[0]


#: One step of a kind's warm-up: the name of the kernels' group it compiles,
#: and the fits that do it.
Group = tuple[str, Callable[[], object]]


def _estimators(X) -> list[Group]:
    """Every estimator path a first fit of X takes, in groups: the default
    annealed fit (few and many clusters: from ``MANY_CLUSTERS`` on, the swap
    search moves many centers a round), the hard and softmax fits and their
    results for new data (and a hard fit whose cell empties), and the
    mini-batch fit."""
    from ._tunables import MANY_CLUSTERS
    from .estimator import RBFKMeans
    from .minibatch import MiniBatchRBFKMeans

    def default():
        for k in (3, 40):
            RBFKMeans(k, random_state=0).fit(X)
        RBFKMeans(3, random_state=0).fit(X).predict_proba(X)

    def hard():
        for k in (3, 40):
            model = RBFKMeans(k, assignment="hard", random_state=0).fit(X)
        model.predict(X), model.transform(X), model.score(X)
        far = X[:40]  # dense centers, whatever kind X is
        far = np.array(far.toarray() if hasattr(far, "toarray") else far)
        far[-1] = 1e3  # no row is near it: an empty cell after a pruned pass
        RBFKMeans(40, assignment="hard", init=far, n_init=1, max_iter=2).fit(X)

    def soft():
        RBFKMeans(3, assignment="softmax", random_state=0).fit(X).predict_proba(X)

    def many():
        RBFKMeans(MANY_CLUSTERS, random_state=0).fit(X)

    def batches():
        MiniBatchRBFKMeans(3, random_state=0).fit(X).partial_fit(X[:500]).predict_proba(X)

    return [
        ("default fit", default),
        ("hard fit", hard),
        ("softmax fit", soft),
        ("many centers", many),
        ("mini-batch", batches),
    ]


def _functional(X, C) -> None:
    """The functional API: responsibilities, objective, gradient, step and
    the statistics for each assignment; the logits' maps and their backward
    passes; seeding and the annealing path."""
    import fastrbfkm as api

    for assignment in ASSIGNMENTS:
        api.responsibilities(X, C, 0.5, assignment)
        api.objective(X, C, 0.5, assignment)
        api.gradient(X, C, 0.5, assignment)
        api.step(X, C, 0.5, assignment)
        api.sufficient_statistics(X, C, 0.5, assignment)
    api.squared_distances(X, C)
    api.kmeans_plusplus(X, 5, random_state=0)
    api.critical_temperature(X, 5)
    api.anneal(X, C, [1.0, 0.5], random_state=0)


def _logits(dtype) -> None:
    import fastrbfkm as api

    Z = np.random.default_rng(0).normal(size=(40, 6)).astype(dtype)
    pairs = ((api.softmax, api.softmax_backward), (api.entmax15, api.entmax15_backward))
    for forward, backward in pairs:
        backward(forward(Z), np.ones_like(Z))


def _wide(X) -> None:
    """A default fit of data wider than ``DENSE_MAX`` features, whose
    principal axes come from Lanczos iterations, not a d x d scatter."""
    from .estimator import RBFKMeans

    RBFKMeans(3, random_state=0).fit(X)


def _arrays(dtype) -> list[Group]:
    from ._tunables import DENSE_MAX

    X = _blobs(dtype)
    return [
        *_estimators(X),
        ("functional API", lambda: _functional(X, X[:5])),
        ("logits", lambda: _logits(dtype)),
        ("wide data", lambda: _wide(_blobs(dtype, n=600, d=DENSE_MAX + 8, centers=3))),
    ]


def _sparse(dtype) -> list[Group]:
    from scipy import sparse

    from ._tunables import DENSE_MAX

    X = _blobs(dtype)
    M = sparse.csr_matrix(np.where(X > 0, X, 0))

    def wide():
        W = _blobs(dtype, n=600, d=DENSE_MAX + 8, centers=3)
        _wide(sparse.csr_matrix(np.where(W > 2, W, 0)))

    return [
        *_estimators(M),
        ("functional API", lambda: _functional(M, M[:5].toarray())),
        ("wide data", wide),
    ]


def _memmap(dtype) -> list[Group]:
    """A file larger than the working memory, streamed block by block."""

    def streamed():
        from sklearn import config_context

        from .estimator import RBFKMeans

        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "X.npy")
            np.save(path, _blobs(dtype, n=20_000))
            X = np.load(path, mmap_mode="r")
            with config_context(working_memory=0.5):
                RBFKMeans(3, random_state=0).fit(X)
                RBFKMeans(3, assignment="hard", random_state=0).fit(X)
            del X

    return [("streamed fits", streamed)]


def _dask(dtype) -> list[Group]:
    def fits():
        import dask.array as da

        from .estimator import RBFKMeans

        X = da.from_array(_blobs(dtype, n=6000), chunks=2000)
        RBFKMeans(3, random_state=0).fit(X).predict_proba(X).compute()
        RBFKMeans(3, assignment="hard", random_state=0).fit(X).predict(X).compute()

    return [("dask fits", fits)]


def _torch(dtype) -> list[Group]:
    def layer():
        import torch

        from .torch import RBFKMeansLayer

        X = torch.as_tensor(_blobs(dtype, n=500)).requires_grad_()
        for assignment in ASSIGNMENTS:
            model = RBFKMeansLayer(4, X.shape[1], sigma=1.0, assignment=assignment).to(X.dtype)
            model.init_from(X.detach())
            (model.loss(X) + model(X)[:, 0].sum()).backward()

    return [("layer", layer)]


_RUNS: dict[str, Callable] = {
    "arrays": _arrays,
    "sparse": _sparse,
    "memmap": _memmap,
    "dask": _dask,
    "torch": _torch,
}


def available(kind: str) -> bool:
    """Whether the optional package a kind needs is installed."""
    package = {"dask": "dask", "torch": "torch"}.get(kind)
    return package is None or importlib.util.find_spec(package) is not None


def _lockable() -> bool:
    """Whether :func:`_serialised_cache` can lock this numba's cache files."""
    try:
        import fcntl  # noqa: F401

        from numba.core.caching import IndexDataCacheFile
    except ImportError:
        return False
    return all(callable(getattr(IndexDataCacheFile, name, None)) for name in ("save", "load"))


@contextlib.contextmanager
def _serialised_cache(lock: str) -> Iterator[None]:
    """While in the block, every save to and load from numba's on-disk
    cache in this process holds an exclusive lock on the file ``lock``: with
    the same lock in every compiling process, a save's read-modify-write of
    a kernel's index and the data file it names is never interleaved with
    another process's save or load."""
    import fcntl

    from numba.core.caching import IndexDataCacheFile

    def locked(method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            with open(lock, "a") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    return method(self, *args, **kwargs)
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)

        return wrapper

    save, load = IndexDataCacheFile.save, IndexDataCacheFile.load
    IndexDataCacheFile.save, IndexDataCacheFile.load = locked(save), locked(load)
    try:
        yield
    finally:
        IndexDataCacheFile.save, IndexDataCacheFile.load = save, load


def _run_quietly(kind: str, dtypes, report: Callable[[str], None] | None = None) -> None:
    """The small fits of ``kind`` for each of ``dtypes``, their warnings and
    the compile announcement silenced; ``report`` gets a line as each
    kernel called from Python is compiled (:func:`_compile_listener`) and as each
    group of fits is done (:func:`group_line`)."""
    from numba.core import event

    from ._threads import one_blas_thread

    with (
        warnings.catch_warnings(),
        open(os.devnull, "w") as quiet,
        contextlib.redirect_stderr(quiet),  # the compile announcement
    ):
        warnings.simplefilter("ignore")
        for dtype in dtypes:
            prefix = f"  {kind} {np.dtype(dtype).name}:"
            compiled = _compile_listener(prefix, report)
            with event.install_listener("numba:compile", compiled):
                for name, step in one_blas_thread(_RUNS[kind])(dtype):
                    start = time.perf_counter()
                    one_blas_thread(step)()
                    if report is not None:
                        report(group_line(kind, dtype, name, time.perf_counter() - start))


def group_line(kind: str, dtype, group: str, seconds: float) -> str:
    """The progress line of one group of fits done (kernels compiled or loaded)."""
    return f"  {kind} {np.dtype(dtype).name}: {group} ({seconds:.1f} s)"


def _compile_listener(prefix: str, report: Callable[[str], None] | None):
    """A numba compile-event listener that reports each fastrbfkm kernel
    compiled at the outermost level (the kernels it calls compile within
    it) as it ends: ``<prefix> compiled <module>.<kernel> (<seconds> s)``.
    numba announces compilations only, not loads from its cache: a warm
    cache reports nothing. (numba is imported here, not with the module:
    the command line's ``--help`` does not load it.)"""
    from numba.core import event

    class Compiled(event.Listener):
        def __init__(self) -> None:
            self.depth = 0
            self.start = 0.0

        def on_start(self, ev) -> None:
            self.depth += 1
            if self.depth == 1:
                self.start = time.perf_counter()

        def on_end(self, ev) -> None:
            self.depth -= 1
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            module = getattr(func, "__module__", None) or ""
            if self.depth or report is None or not module.startswith("fastrbfkm."):
                return
            name = f"{module.rsplit('.', 1)[-1]}.{func.__qualname__}"
            report(f"{prefix} compiled {name} ({time.perf_counter() - self.start:.1f} s)")

    return Compiled()


def compile_half(kind: str, dtype: str, lock: str) -> None:
    """The second process's share of a split kind: its fits for one dtype,
    with the cache locked, a progress line a group on stdout (run by
    :func:`compile_kernels`)."""
    with _serialised_cache(lock):
        _run_quietly(kind, (np.dtype(dtype).type,), lambda line: print(line, flush=True))


def _split(kind: str, lock: str, report: Callable[[str], None]) -> None:
    """Compile ``kind``'s float32 half in a second process while this one
    compiles its float64 half, both holding the cache lock; both halves'
    progress lines go to ``report`` as they come."""
    package_root = Path(__file__).resolve().parent.parent  # the copy running now
    helper = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from fastrbfkm._warmup import compile_half; compile_half(*sys.argv[1:])",
            kind,
            "float32",
            lock,
        ],
        cwd=package_root,  # -c puts the working folder first on sys.path
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lock_report = threading.Lock()

    def said(line: str) -> None:
        with lock_report:
            report(line)

    def relay() -> None:  # the helper's lines, as it prints them
        for line in helper.stdout:
            said(line.rstrip("\n"))

    relaying = threading.Thread(target=relay, daemon=True)
    relaying.start()
    try:
        with _serialised_cache(lock):
            _run_quietly(kind, (np.float64,), said)
    finally:
        errors = helper.stderr.read()
        helper.wait()
        relaying.join()
        helper.stdout.close()
        helper.stderr.close()
    if helper.returncode != 0:
        raise RuntimeError(f"compiling {kind} for float32 failed:\n{errors}")


def compile_kernels(
    kinds: tuple[str, ...] = KINDS, report: Callable[[str], None] = print, jobs: int = 2
) -> list[tuple[str, float]]:
    """Run the small fits of each kind of input in ``kinds`` for float64
    and float32, reporting a line as each group of kernels is done
    (:func:`group_line`) and one per kind; kinds whose optional package is
    missing are reported and skipped. With ``jobs`` 2 or more (and a cache
    that can be locked), the float32 half of the arrays and sparse kinds
    compiles in a second process at once. Returns ``(kind, seconds)`` of
    those run."""
    split = jobs > 1 and (os.cpu_count() or 1) > 1 and _lockable()
    done = []
    with tempfile.TemporaryDirectory() as folder:
        lock = os.path.join(folder, "cache.lock")
        for kind in kinds:
            if not available(kind):
                report(f"{kind:7s} skipped: {kind} is not installed")
                continue
            start = time.perf_counter()
            if split and kind in SPLIT_KINDS:
                _split(kind, lock, report)
            else:
                _run_quietly(kind, DTYPES, report)
            seconds = time.perf_counter() - start
            report(f"{kind:7s} {seconds:6.1f} s")
            done.append((kind, seconds))
    return done
