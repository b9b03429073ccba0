"""Wide data: a fit never forms a d x d matrix, so that it holds X plus
O(k d) memory whatever d is (the covariance of 100000 features alone would
be 75 GiB)."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from fastrbfkm import RBFKMeans
from fastrbfkm._tunables import LANCZOS_STEPS

#: Far above the slowest honest run; a fit that formed d x d matrices would
#: swap rather than fail on a machine with enough virtual memory.
TIMEOUT = 1800

PEAK = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from fastrbfkm import RBFKMeans

    def status(key):
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key))

    n, d, k = (int(a) for a in sys.argv[1:4])
    rng = np.random.default_rng(0)
    # the kernels compile (or load) on small data first: their memory is not the fit's
    small = rng.normal(size=(64, 300)).astype(np.float32)
    for assignment in ("entmax15", "hard"):
        RBFKMeans(k, assignment=assignment, random_state=0).fit(small)
    centers = rng.normal(scale=3.0, size=(k, d)).astype(np.float32)
    X = np.empty((n, d), dtype=np.float32)
    labels = rng.integers(k, size=n)
    for s in range(0, n, 16):  # no temporary the size of X
        X[s : s + 16] = centers[labels[s : s + 16]] + rng.normal(size=(len(X[s : s + 16]), d))
    growth = {}
    for assignment in ("entmax15", "hard"):
        before = status("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # restart the peak (VmHWM) from the current size
        km = RBFKMeans(k, assignment=assignment, random_state=0).fit(X)
        growth[assignment] = status("VmHWM") - before
        assert km.cluster_centers_.shape == (k, d)
    print(json.dumps({"X": X.nbytes, "growth": growth}))
    """
)


def test_a_wide_fit_holds_x_plus_order_k_d_memory():
    """300 x 30000 float32 (36 MB; one covariance would be 7.2 GB): the
    fit's peak above X is within the Lanczos bases and work arrays."""
    n, d, k = 300, 30_000, 4
    out = subprocess.run(
        [sys.executable, "-c", PEAK, str(n), str(d), str(k)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    # 2k Lanczos operators (soft and hard cells), each with its basis; the
    # per-chunk partial sums (<= 32 MiB) and each thread's work arrays.
    bases = 2 * k * (LANCZOS_STEPS + 1) * d * 8
    budget = report["X"] + bases + 96 * 2**20
    for assignment, growth in report["growth"].items():
        assert growth <= budget, (assignment, growth / 2**20, budget / 2**20)


@pytest.mark.parametrize("assignment", ["entmax15", "softmax", "hard"])
def test_ten_rows_of_100000_features(assignment):
    """Once a 100000 x 100000 covariance (MemoryError); now two clear groups."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 100_000)).astype(np.float32)
    X[5:] += 3.0
    km = RBFKMeans(2, assignment=assignment, random_state=0).fit(X)
    assert sorted(np.bincount(km.labels_)) == [5, 5]
    assert len(set(km.labels_[:5])) == 1 and km.sigma_critical_ != 0.0
