"""Processes forked after the kernels have run (multiprocessing, DataLoader
workers) run the kernels too, with the parent's results."""

import subprocess
import sys
import textwrap

import pytest

#: Far above the slowest honest run (a child compiles the serial kernels
#: once); a pool whose worker was killed would wait for ever without one.
TIMEOUT = 1800

PARENT = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import fastrbfkm as fk
    from fastrbfkm import RBFKMeans
    X = np.random.default_rng(0).normal(size=(100000, 8)).astype(np.float32)
    km = RBFKMeans(5, assignment="entmax15", random_state=0).fit(X)  # threads started
    C = km.cluster_centers_
    def work(part):
        rows = X[part::2]
        return km.predict(rows), fk.responsibilities(rows, C, 0.5, "softmax")
    expected = [work(part) for part in range(2)]
    """
)


def _run(script):
    out = subprocess.run(
        [sys.executable, "-c", PARENT + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Terminating" not in out.stderr
    return out.stdout


def test_a_forked_child_runs_the_kernels_with_the_parents_results():
    out = _run(
        """
        pid = os.fork()
        if pid == 0:
            labels, R = work(0)
            same = np.array_equal(labels, expected[0][0]) and np.array_equal(R, expected[0][1])
            refit = RBFKMeans(5, assignment="entmax15", random_state=0).fit(X)
            same = same and np.array_equal(refit.cluster_centers_, C)
            os._exit(0 if same else 3)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        print("child exit", code)
        sys.exit(code)
        """
    )
    assert "child exit 0" in out


def test_a_fork_pool_maps_over_the_kernels():
    _run(
        """
        import multiprocessing
        with multiprocessing.get_context("fork").Pool(2) as pool:
            results = pool.map_async(work, range(2)).get(timeout=1500)
        for (labels, R), (want_labels, want_R) in zip(results, expected):
            assert np.array_equal(labels, want_labels) and np.array_equal(R, want_R)
        """
    )


def test_a_dataloader_with_two_fork_workers():
    pytest.importorskip("torch", reason="the DataLoader case needs PyTorch")
    _run(
        """
        import torch
        from torch.utils.data import DataLoader
        class Parts(torch.utils.data.Dataset):
            def __len__(self):
                return 2
            def __getitem__(self, part):
                return work(part)
        loader = DataLoader(
            Parts(), batch_size=None, num_workers=2, multiprocessing_context="fork"
        )
        for (labels, R), (want_labels, want_R) in zip(loader, expected):
            assert np.array_equal(labels.numpy(), want_labels)
            assert np.array_equal(R.numpy(), want_R)
        """
    )
