"""Compile the kernels ahead of need: ``python -m fastrbfkm compile``.

numba compiles a kernel the first time it is called with a new kind of
argument (float32 or float64, an array or a CSR matrix) and keeps the
machine code in its on-disk cache (``cache=True``): a first fit of each kind
of input waits about a minute on the compiler (61-76 s on 2 cores), and
every later process loads the code in a fraction of a second. This module
runs small fits of every kind the library takes, each entry point and
assignment, so that a user's first fit of real data loads everything from
the cache.

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
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

#: The kinds of input, in the order they are compiled.
KINDS = ("arrays", "sparse", "memmap", "dask", "torch")
DTYPES = (np.float64, np.float32)
#: Kinds whose float32 half compiles in a second process at once.
SPLIT_KINDS = ("arrays", "sparse")


def _blobs(dtype, n: int = 3000, d: int = 8, centers: int = 40) -> np.ndarray:
    from .datasets import make_blobs

    return make_blobs(n, centers=centers, n_features=d, random_state=0, dtype=dtype)[0]


def _estimators(X) -> None:
    """Every estimator path a first fit of X takes: the default annealed fit
    (few and many clusters), the hard and softmax fits and their results for
    new data, and the mini-batch fit."""
    from .estimator import RBFKMeans
    from .minibatch import MiniBatchRBFKMeans

    for k in (3, 40):
        RBFKMeans(k, random_state=0).fit(X)
        hard = RBFKMeans(k, assignment="hard", random_state=0).fit(X)
    hard.predict(X), hard.transform(X), hard.score(X)
    soft = RBFKMeans(3, assignment="softmax", random_state=0).fit(X)
    soft.predict_proba(X)
    RBFKMeans(3, random_state=0).fit(X).predict_proba(X)
    batches = MiniBatchRBFKMeans(3, random_state=0).fit(X)
    batches.partial_fit(X[:500]).predict_proba(X)


def _functional(X, C) -> None:
    """The functional API: responsibilities, objective, gradient, step and
    the statistics for each assignment; the logits' maps and their backward
    passes; seeding and the annealing path."""
    import fastrbfkm as api

    for assignment in ("hard", "softmax", "entmax15"):
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


def _arrays(dtype) -> None:
    from ._tunables import DENSE_MAX

    X = _blobs(dtype)
    _estimators(X)
    _functional(X, X[:5])
    _logits(dtype)
    _wide(_blobs(dtype, n=600, d=DENSE_MAX + 8, centers=3))


def _sparse(dtype) -> None:
    from scipy import sparse

    from ._tunables import DENSE_MAX

    X = _blobs(dtype)
    M = sparse.csr_matrix(np.where(X > 0, X, 0))
    _estimators(M)
    _functional(M, M[:5].toarray())
    wide = _blobs(dtype, n=600, d=DENSE_MAX + 8, centers=3)
    _wide(sparse.csr_matrix(np.where(wide > 2, wide, 0)))


def _memmap(dtype) -> None:
    """A file larger than the working memory, streamed block by block."""
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


def _dask(dtype) -> None:
    import dask.array as da

    from .estimator import RBFKMeans

    X = da.from_array(_blobs(dtype, n=6000), chunks=2000)
    RBFKMeans(3, random_state=0).fit(X).predict_proba(X).compute()
    RBFKMeans(3, assignment="hard", random_state=0).fit(X).predict(X).compute()


def _torch(dtype) -> None:
    import torch

    from .torch import RBFKMeansLayer

    X = torch.as_tensor(_blobs(dtype, n=500)).requires_grad_()
    for assignment in ("hard", "softmax", "entmax15"):
        layer = RBFKMeansLayer(4, X.shape[1], sigma=1.0, assignment=assignment).to(X.dtype)
        layer.init_from(X.detach())
        (layer.loss(X) + layer(X)[:, 0].sum()).backward()


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


def _run_quietly(kind: str, dtypes) -> None:
    """The small fits of ``kind`` for each of ``dtypes``, their warnings and
    the compile announcement silenced."""
    from ._threads import one_blas_thread

    with (
        warnings.catch_warnings(),
        open(os.devnull, "w") as quiet,
        contextlib.redirect_stderr(quiet),  # the compile announcement
    ):
        warnings.simplefilter("ignore")
        for dtype in dtypes:
            one_blas_thread(_RUNS[kind])(dtype)


def compile_half(kind: str, dtype: str, lock: str) -> None:
    """The second process's share of a split kind: its fits for one dtype,
    with the cache locked (run by :func:`compile_kernels`)."""
    with _serialised_cache(lock):
        _run_quietly(kind, (np.dtype(dtype).type,))


def _split(kind: str, lock: str) -> None:
    """Compile ``kind``'s float32 half in a second process while this one
    compiles its float64 half, both holding the cache lock."""
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
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        with _serialised_cache(lock):
            _run_quietly(kind, (np.float64,))
    finally:
        _, errors = helper.communicate()
    if helper.returncode != 0:
        raise RuntimeError(f"compiling {kind} for float32 failed:\n{errors}")


def compile_kernels(
    kinds: tuple[str, ...] = KINDS, report: Callable[[str], None] = print, jobs: int = 2
) -> list[tuple[str, float]]:
    """Run the small fits of each kind of input in ``kinds`` for float64
    and float32, reporting a line per kind; kinds whose optional package is
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
                _split(kind, lock)
            else:
                _run_quietly(kind, DTYPES)
            seconds = time.perf_counter() - start
            report(f"{kind:7s} {seconds:6.1f} s")
            done.append((kind, seconds))
    return done
