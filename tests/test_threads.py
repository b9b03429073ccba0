"""Results are bit-identical with 1 and 2 threads (fixed chunk order)."""

import hashlib
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import hashlib, numba, numpy as np
    import fastrbfkm as fk
    from fastrbfkm import _kernels as K
    rng = np.random.default_rng(0)
    h = hashlib.sha256()
    for dtype in (np.float32, np.float64):
        X = rng.normal(size=(20_011, 5)).astype(dtype)
        C = X[:7].copy()
        w = rng.uniform(0.5, 2.0, size=len(X))
        for assignment in ("hard", "softmax", "entmax15"):
            for sigma in (0.0, 0.3, 5.0):
                N, S, F = fk.sufficient_statistics(X, C, sigma, assignment, sample_weight=w)
                h.update(N.tobytes()); h.update(S.tobytes()); h.update(np.float64(F).tobytes())
                h.update(fk.responsibilities(X, C, sigma, assignment).tobytes())
        labels, mind, inertia = K.hard_assign(X, C, w)
        h.update(labels.tobytes()); h.update(mind.tobytes())
        h.update(np.float64(inertia).tobytes())
        h.update(fk.squared_distances(X, C).tobytes())
        h.update(fk.entmax15(X).tobytes()); h.update(fk.softmax(X).tobytes())
    print(numba.get_num_threads(), h.hexdigest())
    """
)


def run(threads):
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    used, digest = out.stdout.split()
    return int(used), digest


def test_identical_with_one_and_two_threads():
    one = run(1)
    two = run(2)
    assert one[0] == 1 and two[0] == 2, "the thread settings did not take effect"
    assert one[1] == two[1]
    assert len(one[1]) == len(hashlib.sha256().hexdigest())
