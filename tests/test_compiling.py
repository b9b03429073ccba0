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
    from fastrbfkm.__main__ import main

    with pytest.raises(SystemExit) as info:
        main(["compile", "arrays", "tensors"])
    assert info.value.code == 2
    assert "unknown kind 'tensors'; the kinds are arrays, sparse, memmap" in capsys.readouterr().err
    assert main(["compile", "arrays"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("fastrbfkm compile: compiling the kernels")
    assert out[1].startswith("arrays ") and out[1].endswith(" s")
    assert out[2].startswith("done in") and len(out) == 3


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
