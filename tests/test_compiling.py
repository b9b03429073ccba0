"""A cold numba cache is announced in one line; a warm one prints nothing."""

import os
import subprocess
import sys

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
