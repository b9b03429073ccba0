"""A cold numba cache is announced in one line; a warm one prints nothing."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fastrbfkm._kernels.compiling import MESSAGE

SCRIPT = (
    "import numpy as np, fastrbfkm as fk\n"
    "X = np.random.default_rng(0).normal(size=(100, 3))\n"
    "fk.squared_distances(X, X[:4])\n"
)


def test_first_run_says_it_compiles_and_the_next_does_not(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    runs = [
        subprocess.run(
            [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
        )
        for _ in range(2)
    ]
    assert runs[0].stderr.count(MESSAGE) == 1, runs[0].stderr
    assert MESSAGE not in runs[1].stderr, runs[1].stderr


#: A float32 fit's kernels, then one that sees only its float64 centers (the
#: many-centers swap search's neighbours), in a fresh process.
CENTERS_ONLY = (
    "import numpy as np\n"
    "from fastrbfkm import _kernels as K\n"
    "X = np.random.default_rng(0).normal(size=(100, 3)).astype(np.float32)\n"
    "K.squared_distances(X, X[:4])\n"
    "P = X[:6].astype(np.float64)\n"
    "K.nearest_centers(P, (P * P).sum(axis=1), 2)\n"
)


def test_the_announcement_names_the_data_not_the_kernels_first_argument(tmp_path):
    """A float32 fit with many centers, whose neighbour search compiles for
    the float64 centers, said "compiling kernels for float64 arrays"."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    run = subprocess.run(
        [sys.executable, "-c", CENTERS_ONLY], env=env, capture_output=True, text=True, check=True
    )
    said = [line for line in run.stderr.splitlines() if MESSAGE in line]
    assert len(said) == 1 and f"{MESSAGE} for float32 arrays " in said[0], run.stderr


def test_read_only_data_compiles_nothing_more():
    """A read-only array (a memmap opened with mmap_mode="r") used to compile
    a second specialization of every kernel (47 s for a fit)."""
    import numpy as np
    from numba.core import event

    from fastrbfkm import RBFKMeans
    from fastrbfkm.datasets import make_blobs

    X, _ = make_blobs(3000, centers=4, random_state=0)
    RBFKMeans(4, random_state=0).fit(X)
    frozen = X.copy()
    frozen.flags.writeable = False
    compiled = event.RecordingListener()
    with event.install_listener("numba:compile", compiled):
        km = RBFKMeans(4, random_state=0).fit(frozen)
    assert not compiled.buffer, [e.data["dispatcher"] for _, e in compiled.buffer]
    np.testing.assert_array_equal(
        km.cluster_centers_, RBFKMeans(4, random_state=0).fit(X).cluster_centers_
    )


def _first_fits():
    """``bench/first_fit.py``: the script of a user's first fit of each kind
    of input (as in a fresh process after installation) and the kinds, with
    the optional package each needs."""
    path = Path(__file__).resolve().parent.parent / "bench" / "first_fit.py"
    spec = importlib.util.spec_from_file_location("first_fit", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SCRIPT, module.KINDS


FIRST_FIT, FIRST_FITS = _first_fits()


@pytest.fixture(scope="module")
def warmed_up():
    """``python -m fastrbfkm compile``, as the README's install step runs it
    (seconds when the cache is warm, as in CI after .ci/run's warm-up)."""
    subprocess.run(
        [sys.executable, "-m", "fastrbfkm", "compile"],
        check=True,
        capture_output=True,
        timeout=3600,
    )


@pytest.mark.parametrize("kind", list(FIRST_FITS))
def test_after_the_warm_up_a_first_fit_of_any_kind_compiles_nothing(kind, warmed_up):
    if FIRST_FITS[kind]:
        pytest.importorskip(FIRST_FITS[kind])
    run = subprocess.run(
        [sys.executable, "-c", FIRST_FIT, kind],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    assert json.loads(run.stdout.splitlines()[-1])["compiled"] == [], run.stderr
    assert MESSAGE not in run.stderr


def test_the_compile_command_takes_kinds_by_name(capsys):
    import numpy as np

    from fastrbfkm.__main__ import main
    from fastrbfkm._warmup import _arrays

    with pytest.raises(SystemExit) as info:
        main(["compile", "arrays", "tensors"])
    assert info.value.code == 2
    assert "unknown kind 'tensors'; the kinds are arrays, sparse, memmap" in capsys.readouterr().err
    assert main(["compile", "arrays"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("fastrbfkm compile: compiling the kernels")
    assert out[-2].startswith("arrays ") and out[-2].endswith(" s")
    assert out[-1].startswith("done in")
    # a line as each group of kernels is done, for each dtype (the float32
    # half's from the second process), in the order the groups finish
    # (and one as each kernel is compiled, with a cold cache: none here)
    groups = [name for name, _ in _arrays(np.float64)]
    for dtype in ("float64", "float32"):
        said = [line for line in out[1:-2] if line.startswith(f"  arrays {dtype}: ")]
        assert [line.split(": ", 1)[1].rsplit(" (", 1)[0] for line in said] == groups, out
    assert len(out) == 3 + 2 * len(groups)


def test_compile_finds_the_installed_copy_a_source_folder_shadows(tmp_path, monkeypatch):
    """``pip install .`` then ``python -m fastrbfkm compile`` in the clone's
    root runs the source folder, whose kernels numba caches beside it: the
    installed copy, which scripts elsewhere import, is found to compile too."""
    from importlib import metadata

    from fastrbfkm import __main__ as cli

    installed = tmp_path / "site-packages" / "fastrbfkm"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("")

    class Copy:
        def __init__(self, root):
            self.root = root

        def locate_file(self, path):
            return self.root / path

    here = Path(cli.__file__).parent  # the running copy: a source folder's own metadata
    found = [Copy(here.parent), Copy(tmp_path / "site-packages")]
    monkeypatch.setattr(metadata, "distributions", lambda name: iter(found))
    assert cli.installed_elsewhere() == installed
    found.pop()  # only the running copy (an editable install), or none: nothing more
    assert cli.installed_elsewhere() is None
    found.clear()
    assert cli.installed_elsewhere() is None


#: One of two processes saving entries to the same numba cache index at once
#: (argv: cache folder, lock file or "-" for none, the process's name).
RACE = """
import contextlib, sys
from numba.core.caching import IndexDataCacheFile
from fastrbfkm._warmup import _serialised_cache

folder, lock, name = sys.argv[1:]
cache = IndexDataCacheFile(folder, "kernel", "stamp")
with _serialised_cache(lock) if lock != "-" else contextlib.nullcontext():
    for i in range(60):
        cache.save((name, i), f"{name} {i}")
"""


def _race(tmp_path, lock):
    folder = tmp_path / ("locked" if lock != "-" else "unlocked")
    folder.mkdir()
    racers = [
        subprocess.Popen([sys.executable, "-c", RACE, str(folder), lock, name])
        for name in ("float32", "float64")
    ]
    assert [racer.wait(timeout=3600) for racer in racers] == [0, 0]
    from numba.core.caching import IndexDataCacheFile

    cache = IndexDataCacheFile(str(folder), "kernel", "stamp")
    return {(name, i): cache.load((name, i)) for name in ("float32", "float64") for i in range(60)}


def test_the_cache_lock_keeps_both_compiling_processes_entries(tmp_path):
    """``compile`` runs two processes that save kernels to the same cache:
    under its lock every entry of both is kept and loads its own data (numba
    issue 4807: unlocked, one process's index overwrites the other's, and
    two entries can name the same data file)."""
    loaded = _race(tmp_path, str(tmp_path / "cache.lock"))
    assert loaded == {(name, i): f"{name} {i}" for name, i in loaded}
    assert len(loaded) == 120


def test_the_cache_lock_is_released_after_the_block(tmp_path):
    from numba.core.caching import IndexDataCacheFile

    from fastrbfkm._warmup import _serialised_cache

    save, load = IndexDataCacheFile.save, IndexDataCacheFile.load
    with _serialised_cache(str(tmp_path / "cache.lock")):
        assert IndexDataCacheFile.save is not save
    assert (IndexDataCacheFile.save, IndexDataCacheFile.load) == (save, load)


#: In a fresh process: ``compile``'s fits of every kind for one dtype (argv),
#: then every kernel that ran from Python (numba loads or compiles it on a
#: call) with its signatures and whether each loads from numba's on-disk cache.
REACHED = """
import json, sys
import numpy as np
from fastrbfkm._warmup import KINDS, _run_quietly, available
from tests.test_compiling import dispatchers

for kind in KINDS:
    assert available(kind), kind
    _run_quietly(kind, (np.dtype(sys.argv[1]).type,))
print(json.dumps({
    name: [[str(sig), kernel._cache.load_overload(sig, kernel.targetctx) is not None]
           for sig in kernel.signatures]
    for name, kernel in dispatchers().items()
}))
"""


def dispatchers() -> dict:
    """Every numba CPU dispatcher of the package by its qualified name
    (every module imported; ``fastrbfkm.cuda``'s kernels are numba.cuda's,
    compiled on the GPU at first use: not the compile command's)."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher

    import fastrbfkm

    found = {}
    for info in pkgutil.walk_packages(fastrbfkm.__path__, "fastrbfkm."):
        if info.name.startswith("fastrbfkm.cuda"):
            continue
        for value in vars(importlib.import_module(info.name)).values():
            if not isinstance(value, CPUDispatcher):
                continue
            func = value.py_func
            if func.__module__.startswith("fastrbfkm"):
                found[f"{func.__module__}.{func.__qualname__}"] = value
    return found


def _callees(kernel, layout: str) -> set:
    """The dispatchers a kernel's source calls (by global name, or as an
    attribute of a module it names), a layout step (:mod:`fastrbfkm._kernels.layout`)
    by its choice for ``layout``."""
    import types

    from numba.core.registry import CPUDispatcher

    names = set()

    def walk(code):
        names.update(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)

    walk(kernel.py_func.__code__)
    found = set()
    for name in names:
        value = kernel.py_func.__globals__.get(name)
        if isinstance(value, types.ModuleType):
            found.update(getattr(value, other, None) for other in names)
        else:
            found.add(value)
    found = {getattr(value, "choices", {}).get(layout, value) for value in found}
    return {value for value in found if isinstance(value, CPUDispatcher)}


#: The dispatchers no user's fit runs, which ``compile`` therefore leaves
#: alone, and why (the test checks that it does leave them alone).
NEVER_RUN = {
    "fastrbfkm._kernels.dense.to_seed": (
        "one row's k-means++ distance, the reference tests/test_seeding_kernel.py "
        "checks the blocked kernel against"
    ),
    "fastrbfkm._kernels.sparse.scatter_row": (
        "a CSR stand-in that raises, so that the dense-only scatter kernels type-check"
    ),
}


def test_compile_leaves_a_cache_entry_for_every_kernel_and_kind():
    """Every numba dispatcher of the package is compiled by ``compile``
    (called from Python by its fits, or from such a kernel for the same
    layout of data), each kernel called from Python for float32 and for
    float64 data alike, with dense and CSR data as it is for either, and
    each signature it ran is in the on-disk cache. The many-centers swap
    search (``pruned.nearest_centers``, from ``MANY_CLUSTERS`` centers on)
    was compiled by the first such fit instead."""
    from numba.core.caching import NullCache

    kernels = dispatchers()
    assert len(kernels) > 100
    assert [name for name, k in kernels.items() if isinstance(k._cache, NullCache)] == []
    root = Path(__file__).resolve().parent.parent
    ran = {}
    for dtype in ("float32", "float64"):
        out = subprocess.run(
            [sys.executable, "-c", REACHED, dtype],
            capture_output=True, text=True, check=True, cwd=root, timeout=3600,
        )  # fmt: skip
        ran[dtype] = json.loads(out.stdout.splitlines()[-1])
    uncached = [(n, s) for r in ran.values() for n, sigs in r.items() for s, ok in sigs if not ok]
    assert uncached == []

    def layouts(reached):  # (kernel, layout of its first argument) called from Python
        return {
            (name, "CSR" if sig.split(",")[0].startswith("(CSR(") else "dense")
            for name, sigs in reached.items()
            for sig, _ in sigs
        }

    assert layouts(ran["float32"]) == layouts(ran["float64"])
    by_object = {id(k): name for name, k in kernels.items()}
    todo = list(layouts(ran["float64"]))
    seen = set(todo)
    while todo:
        name, layout = todo.pop()
        for callee in _callees(kernels[name], layout):
            state = (by_object[id(callee)], layout)
            if state not in seen:
                seen.add(state)
                todo.append(state)
    assert sorted(set(kernels) - {name for name, _ in seen}) == sorted(NEVER_RUN)
