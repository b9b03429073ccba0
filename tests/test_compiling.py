"""A cold numba cache is announced in one line; a warm one prints nothing."""

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


#: A user's first fit of each kind of input, as in a fresh process after
#: installation; prints the fastrbfkm kernels numba compiled on its last line.
FIRST_FIT = """
import json, os, sys, tempfile
import numpy as np
from numba.core import event
import fastrbfkm as fk
from fastrbfkm.datasets import make_blobs

kind = sys.argv[1]
compiled = event.RecordingListener()
event.register("numba:compile", compiled)
X = make_blobs(30000, centers=8, n_features=16, random_state=0)[0]
if kind == "float64":
    fk.RBFKMeans(8).fit(X).predict(X)
elif kind == "float32":
    fk.RBFKMeans(8).fit(X.astype(np.float32)).predict_proba(X)
elif kind == "int64":
    fk.RBFKMeans(8).fit((10 * X).astype(np.int64))
elif kind == "wide":  # principal axes by Lanczos iterations
    fk.RBFKMeans(4).fit(make_blobs(3000, centers=4, n_features=200, random_state=0)[0])
elif kind == "read-only":
    X.flags.writeable = False
    fk.RBFKMeans(8, assignment="hard").fit(X)
elif kind == "csr":
    from scipy import sparse
    M = sparse.random(30000, 300, density=0.02, format="csr", random_state=0)
    fk.RBFKMeans(8).fit(M).predict(M)
elif kind == "memmap":
    from sklearn import config_context
    path = os.path.join(tempfile.mkdtemp(), "X.npy")
    np.save(path, X.astype(np.float32))
    with config_context(working_memory=1):  # streamed, not loaded
        fk.RBFKMeans(8).fit(np.load(path, mmap_mode="r"))
elif kind == "dask":
    import dask.array as da
    fk.RBFKMeans(8).fit(da.from_array(X, chunks=10000))
elif kind == "minibatch":
    fk.MiniBatchRBFKMeans(8).fit(X).partial_fit(X[:1000])
elif kind == "torch":
    import torch
    from fastrbfkm.torch import RBFKMeansLayer
    codes = torch.as_tensor(X[:2000], dtype=torch.float32).requires_grad_()
    layer = RBFKMeansLayer(n_clusters=8, n_features=16, sigma=1.0, assignment="entmax15")
    layer.init_from(codes.detach())
    (layer.loss(codes) + layer(codes)[:, 0].sum()).backward()
names = sorted({
    getattr(e.data["dispatcher"], "py_func", e.data["dispatcher"]).__qualname__
    for _, e in compiled.buffer
    if e.is_start and e.data.get("dispatcher") is not None
})
print(json.dumps(names))
"""

#: Kinds and the optional package each needs.
FIRST_FITS = {
    "float64": None,
    "float32": None,
    "int64": None,
    "wide": None,
    "read-only": None,
    "csr": None,
    "memmap": None,
    "dask": "dask",
    "minibatch": None,
    "torch": "torch",
}


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
    assert json.loads(run.stdout.splitlines()[-1]) == [], run.stderr
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
