"""Ctrl-C stops a fit with KeyboardInterrupt (API) or exit status 130 (CLI)."""

import signal
import subprocess
import sys
import textwrap
import time

import numpy as np

#: Far above the slowest honest start (a first run compiles the kernels).
START_TIMEOUT = 3600

FIT_FOREVER = textwrap.dedent(
    """
    import signal, sys
    import numpy as np
    signal.signal(signal.SIGINT, signal.default_int_handler)  # whatever the parent did
    from fastrbfkm import RBFKMeans
    X = np.random.default_rng(0).normal(size=(200000, 16)).astype(np.float32)
    options = dict(assignment="softmax", sigma=5.0, tol=0, refine=False)
    RBFKMeans(64, max_iter=2, **options).fit(X[:5000])  # every kernel compiled or loaded
    print("fitting", flush=True)
    try:
        for seed in range(10**6):
            km = RBFKMeans(64, random_state=seed, **options)
            km.fit(X)
    except KeyboardInterrupt:
        print("KeyboardInterrupt; fitted:", hasattr(km, "cluster_centers_"), flush=True)
        sys.exit(0)
    """
)


def _interrupt(args, delays):
    """Start ``args``, wait for its first line, SIGINT it after each delay in
    turn (a fresh process each time); return (seconds to exit, process, out, err)."""
    results = []
    for delay in delays:
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            first = p.stdout.readline()
            assert first, p.stderr.read()
            time.sleep(delay)
            start = time.monotonic()
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=START_TIMEOUT)
            results.append((time.monotonic() - start, p.returncode, first + out, err))
        finally:
            p.kill()
    return results


def test_ctrl_c_stops_a_fit_with_keyboard_interrupt():
    # several moments, so that some land inside a compiled kernel (which gave a
    # SystemError) and some between passes
    for elapsed, code, out, err in _interrupt(
        [sys.executable, "-c", FIT_FOREVER], [0.3, 0.7, 1.1, 1.6]
    ):
        assert code == 0, err
        assert "KeyboardInterrupt; fitted: False" in out, (out, err)
        assert elapsed < 5, elapsed


def test_ctrl_c_ends_the_cli_with_status_130(tmp_path):
    X = np.random.default_rng(0).normal(size=(1_500_000, 8)).astype(np.float32)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "small.npy", X[:1000])
    script = textwrap.dedent(
        f"""
        import contextlib, io, signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from fastrbfkm.__main__ import main
        options = ["--k", "64"]  # the default annealed fit: every kernel call is one pass
        with contextlib.redirect_stdout(io.StringIO()):  # every kernel compiled or loaded
            main(["fit", {str(tmp_path / "small.npy")!r}, *options])
        print("fitting", flush=True)
        sys.exit(main(["fit", {str(tmp_path / "X.npy")!r}, *options]))
        """
    )
    for elapsed, code, out, err in _interrupt([sys.executable, "-c", script], [0.5, 1.5]):
        assert code == 130, (out, err)
        assert err.strip().splitlines()[-1] == "interrupted", err
        assert "Traceback" not in err, err
        assert elapsed < 5, elapsed


SEED_FOREVER = textwrap.dedent(
    """
    import signal, sys
    import numpy as np
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import fastrbfkm as fk
    X = np.random.default_rng(0).normal(size=(400000, 32)).astype(np.float32)
    fk.kmeans_plusplus(X[:3000], 256, random_state=0)  # compiled or loaded
    print("seeding", flush=True)
    try:
        for seed in range(10**6):  # each run: ~2e10 distance terms, tens of seconds
            fk.kmeans_plusplus(X, 256, random_state=seed)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(0)
    """
)


def test_ctrl_c_stops_kmeans_plusplus_seeding():
    """Greedy k-means++ was one kernel call of k passes: Ctrl-C waited for
    all of them. It now runs in calls of bounded work."""
    for elapsed, code, out, err in _interrupt([sys.executable, "-c", SEED_FOREVER], [1.0, 2.5]):
        assert code == 0, err
        assert "KeyboardInterrupt" in out, (out, err)
        assert elapsed < 5, elapsed
