"""Results are bit-identical with 1 and 2 threads (fixed chunk order); small calls run
on one thread; numba's OpenMP threads wait passively unless the user chose."""

import hashlib
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import hashlib, numba, numpy as np
    from scipy import sparse
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
        labels, mind, inertia = K.hard_assign(X, C, w, True)
        h.update(labels.tobytes()); h.update(mind.tobytes())
        h.update(np.float64(inertia).tobytes())
        h.update(fk.squared_distances(X, C).tobytes())
        h.update(fk.entmax15(X).tobytes()); h.update(fk.softmax(X).tobytes())
        # CSR rows: the same kernels through their sparse steps
        M = sparse.random(20_011, 40, density=0.2, format="csr", random_state=1, dtype=dtype)
        C = M[:7].toarray()
        for assignment in ("hard", "softmax", "entmax15"):
            N, S, F = fk.sufficient_statistics(M, C, 0.3, assignment, sample_weight=w)
            h.update(N.tobytes()); h.update(S.tobytes()); h.update(np.float64(F).tobytes())
            h.update(fk.responsibilities(M, C, 0.3, assignment).tobytes())
        h.update(fk.squared_distances(M, C).tobytes())
        h.update(fk.kmeans_plusplus(M, 7, sample_weight=w, random_state=0)[1].tobytes())
        # pruned hard passes over Lloyd iterations: labels, bounds, statistics
        from fastrbfkm._rows import InMemoryRows
        rows = InMemoryRows(X, w)
        # init="k-means++" in memory: greedy k-means++ on a weighted sample
        h.update(rows.initial_centers(7, "k-means++", np.random.default_rng(0)).tobytes())
        C = X[:40].copy()
        bounds = rows.new_bounds(40)
        for _ in range(4):
            N, S, summary, cells, evaluated = rows.pruned_stats(C, bounds)
            h.update(N.tobytes()); h.update(S.tobytes()); h.update(bounds.labels.tobytes())
            h.update(cells.tobytes())
            h.update(bounds.lower.tobytes()); h.update(np.int64(evaluated).tobytes())
            C = (S / np.maximum(N, 1e-300)[:, None]).astype(dtype)
        # the swap search's cell summary: costs, cells, masses, scatter
        sums, A = K.cell_summary(X, C, w, True)
        h.update(sums.tobytes()); h.update(A.tobytes())
        # pruned soft passes with the same kind of bounds, at a cold temperature
        from fastrbfkm._rows import Bounds
        soft = Bounds(np.zeros(len(X), dtype=np.int32), np.zeros(len(X)))
        for _ in range(3):
            N, S, summary, evaluated = rows.pruned_soft_stats(C, 0.05, K.ENTMAX15, soft)
            h.update(N.tobytes()); h.update(S.tobytes()); h.update(summary.tobytes())
            h.update(soft.labels.tobytes()); h.update(soft.lower.tobytes())
            h.update(np.int64(evaluated).tobytes())
            C = (S / np.maximum(N, 1e-300)[:, None]).astype(dtype)
    print(numba.get_num_threads(), h.hexdigest())
    """
)


def run(threads, script=SCRIPT):
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    used, digest = out.stdout.split()
    return int(used), digest


def test_identical_with_one_and_two_threads():
    one = run(1)
    two = run(2)
    assert one[0] == 1 and two[0] == 2, "the thread settings did not take effect"
    assert one[1] == two[1]
    assert len(one[1]) == len(hashlib.sha256().hexdigest())


FIT_SCRIPT = textwrap.dedent(
    """
    import hashlib, numba, numpy as np
    from fastrbfkm import RBFKMeans
    from fastrbfkm.datasets import make_blobs
    h = hashlib.sha256()
    # Small enough to anneal every row; large enough to anneal a sample
    # (anneal_size) whose passes run in parallel.
    for n, d, k in ((3000, 2, 6), (30_000, 4, 5)):
        X, _ = make_blobs(n, n_features=d, centers=k, cluster_std=2.0, random_state=3)
        for metric in ("euclidean", "cosine"):
            km = RBFKMeans(k, random_state=0, metric=metric).fit(X)
            h.update(km.cluster_centers_.tobytes()); h.update(km.labels_.tobytes())
            h.update(np.float64(km.inertia_).tobytes())
    print(numba.get_num_threads(), h.hexdigest())
    """
)


def test_default_fit_identical_with_one_and_two_threads_and_across_runs():
    one = run(1, FIT_SCRIPT)
    two = run(2, FIT_SCRIPT)
    assert one[0] == 1 and two[0] == 2
    assert one[1] == two[1] == run(2, FIT_SCRIPT)[1]


def test_small_calls_run_on_one_thread_and_restore_the_limit():
    import numba
    import numpy as np

    from fastrbfkm import _kernels as K
    from fastrbfkm._kernels.threads import is_small, serial_when_small

    assert is_small(1000, 10**6)  # a single chunk of rows
    assert is_small(10_000, 8 * 3)
    assert not is_small(100_000, 64 * 33)
    seen = []

    @serial_when_small(lambda n: (n, 1))
    def probe(n):
        seen.append(numba.get_num_threads())
        return n

    limit = numba.get_num_threads()
    probe(10)
    probe(10**8)
    assert seen == [1, limit]
    assert numba.get_num_threads() == limit
    # A limit the caller set is only ever lowered, and is given back.
    numba.set_num_threads(1)
    try:
        probe(10**8)
        assert seen[-1] == 1 and numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(limit)
    # The wrapped kernels give the compiled kernels' results.
    X = np.random.default_rng(0).normal(size=(50, 3))
    np.testing.assert_array_equal(
        K.squared_distances(X, X[:4]), K.squared_distances.kernel(X, X[:4])
    )


WAIT_SCRIPT = textwrap.dedent(
    """
    import os, numpy as np
    import fastrbfkm as fk
    fk.squared_distances(np.ones((10, 2)), np.ones((2, 2)))
    print(os.environ.get("GOMP_SPINCOUNT"), os.environ.get("OMP_WAIT_POLICY"))
    """
)


def _spin_count(env):
    """``(the process's GOMP_SPINCOUNT and OMP_WAIT_POLICY after a kernel
    call, the spin count numba's OpenMP runtime started with)``."""
    out = subprocess.run(
        [sys.executable, "-c", WAIT_SCRIPT],
        env=dict(env, OMP_DISPLAY_ENV="VERBOSE", NUMBA_THREADING_LAYER="omp"),
        capture_output=True,
        text=True,
        check=True,
    )
    # The last runtime to start is numba's (scikit-learn may load its own first).
    shown = [line for line in out.stderr.splitlines() if "GOMP_SPINCOUNT" in line]
    return out.stdout.strip(), shown[-1].split("=")[1].strip(" '") if shown else None


def test_openmp_threads_spin_briefly_unless_the_user_chose():
    from fastrbfkm._kernels.threads import SPIN_COUNT

    chosen = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")
    env = {key: value for key, value in os.environ.items() if key not in chosen}
    # numba's OpenMP runtime starts with a short spin; the environment is left as it was.
    assert _spin_count(env) == ("None None", str(SPIN_COUNT))
    # A wait policy or a spin count the user chose is theirs.
    assert _spin_count(dict(env, OMP_WAIT_POLICY="ACTIVE"))[1] == "30000000000"
    assert _spin_count(dict(env, GOMP_SPINCOUNT="12345")) == ("12345 None", "12345")


def test_seeding_runs_blas_on_one_thread(monkeypatch):
    """Greedy k-means++ forms dense distances as BLAS products inside its
    parallel chunks: BLAS threads of its own there would oversubscribe the
    cores and make the rounding depend on them, so the public entry point
    limits BLAS to one thread, as the fits do."""
    import numpy as np
    from threadpoolctl import threadpool_info

    import fastrbfkm as fk
    from fastrbfkm import _kernels as K

    seen = []
    kernel = K.kmeans_plusplus

    def spy(*args):
        pools = threadpool_info()
        seen.append({pool["num_threads"] for pool in pools if pool["user_api"] == "blas"})
        return kernel(*args)

    monkeypatch.setattr(K, "kmeans_plusplus", spy)
    X = np.random.default_rng(0).normal(size=(500, 16))
    fk.kmeans_plusplus(X, 5, random_state=0)
    assert seen and all(threads == {1} for threads in seen)
