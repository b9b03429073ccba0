import subprocess
import sys

import numpy as np

from fastrbfkm.datasets import make_blobs


def test_make_blobs_is_seeded():
    X1, y1 = make_blobs(500, centers=4, n_features=3, random_state=7)
    X2, y2 = make_blobs(500, centers=4, n_features=3, random_state=7)
    X3, _ = make_blobs(500, centers=4, n_features=3, random_state=8)
    assert X1.shape == (500, 3) and y1.shape == (500,)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)
    assert np.bincount(y1).tolist() == [125] * 4
    assert make_blobs(10, dtype=np.float32)[0].dtype == np.float32


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "fastrbfkm", *args], capture_output=True, text=True, timeout=300
    )


def test_demo_runs_and_reports():
    out = run("demo", "--n", "20000", "--k", "4", "--seed", "1")
    assert out.returncode == 0, out.stderr
    assert "Lloyd via step(sigma=0): inertia" in out.stdout
    assert "Gamma-convergence" in out.stdout


def test_demo_user_errors_are_one_line():
    out = run("demo", "--n", "3", "--k", "8")
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert "--n" in out.stderr
