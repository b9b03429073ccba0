"""Out-of-core fits: a memory-mapped file larger than the working memory is
streamed in row blocks, equals the in-memory fit, and keeps the process's
peak resident memory bounded by the block size (measured in a subprocess)."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn import config_context

from fastrbfkm import RBFKMeans
from fastrbfkm._backend import open_rows
from fastrbfkm._streaming import StreamedRows, file_region, streams, working_memory_bytes
from fastrbfkm.datasets import make_blobs

#: Working memory (MiB) of the tests: blocks of 0.5 MiB / 64 bytes = 8192 rows.
BUDGET = 0.5
N, D = 50_000, 8  # 3.1 MiB in float64: 7 blocks


@pytest.fixture(scope="module")
def npy(tmp_path_factory):
    X, _ = make_blobs(N, centers=5, n_features=D, cluster_std=1.5, random_state=0)
    path = tmp_path_factory.mktemp("stream") / "X.npy"
    np.save(path, X)
    return path


def open_npy(path):
    return np.load(path, mmap_mode="r")


FITS = {
    "hard": dict(assignment="hard"),
    "softmax-sigma": dict(assignment="softmax", sigma=4.0, refine=False),
    "entmax15-anneal": dict(assignment="entmax15", cooling=0.5),
}


@pytest.mark.parametrize("config", list(FITS))
def test_streamed_fit_equals_in_memory_fit(npy, config):
    X = open_npy(npy)
    w = np.random.default_rng(1).uniform(0.5, 2.0, N)
    params = dict(FITS[config], init=np.array(X[[0, 1, 2, 3, 4]]), random_state=0)
    ref = RBFKMeans(5, **params).fit(np.array(X), sample_weight=w)
    with config_context(working_memory=BUDGET):
        assert streams(X)
        rows = open_rows(X, w, fit=True)
        assert isinstance(rows, StreamedRows) and rows.block_rows == 8192
        fit = RBFKMeans(5, **params).fit(X, sample_weight=w)
    scale = np.abs(np.array(X)).max()
    atol = 1e-9 * scale
    np.testing.assert_allclose(fit.cluster_centers_, ref.cluster_centers_, rtol=0, atol=atol)
    assert fit.inertia_ == pytest.approx(ref.inertia_, rel=1e-9)
    assert fit.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(fit.labels_, ref.labels_)


def test_small_memmaps_and_other_arrays_stay_in_memory(npy):
    X = open_npy(npy)
    assert not streams(X)  # 3 MiB < the default 1024 MiB
    with config_context(working_memory=BUDGET):
        assert not streams(np.array(X))
        assert not streams(X.T)  # not C-contiguous
        assert streams(X[1000:])  # a row slice of a memmap streams from its offset
        assert not streams(X[:1000])  # small enough


def test_row_slices_and_other_dtypes_stream_the_right_bytes(npy, tmp_path):
    X = open_npy(npy)
    part = X[12_345:]
    with config_context(working_memory=BUDGET):
        rows = open_rows(part, fit=True)
        assert file_region(part)[1] == file_region(X)[1] + 12_345 * D * 8
        got = np.concatenate([block.copy() for _, block in rows.blocks()])
    np.testing.assert_array_equal(got, part)
    for dtype in (">f8", np.int16, np.float32):
        path = tmp_path / f"X-{np.dtype(dtype).str}.npy"
        np.save(path, (np.array(X) * 100).astype(dtype))
        M = open_npy(path)
        with config_context(working_memory=BUDGET / 4):
            rows = open_rows(M, fit=True)
            got = np.concatenate([block.copy() for _, block in rows.blocks()])
        assert rows.dtype == (np.float32 if M.dtype == np.float32 else np.float64)
        np.testing.assert_array_equal(got, np.array(M).astype(rows.dtype))


def test_buffers_fit_in_the_working_memory(npy):
    X = open_npy(npy)
    with config_context(working_memory=BUDGET):
        rows = open_rows(X, fit=True)
        for _ in rows.blocks():
            pass
        held = sum(b.nbytes for b in rows._buffers if b is not None)
        assert held <= working_memory_bytes()
        converted = StreamedRows(X.view(np.int64), np.empty(0))
        assert converted.block_rows == working_memory_bytes() // (D * 16)  # float64 + raw int64


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e300])
def test_bad_values_in_a_late_block_raise(tmp_path, bad):
    X = np.random.default_rng(0).normal(size=(40_000, 4))
    X[39_000, 2] = bad
    np.save(tmp_path / "bad.npy", X)
    with config_context(working_memory=0.25), pytest.raises(ValueError, match=r"^X (contains|has)"):
        RBFKMeans(3, assignment="hard").fit(open_npy(tmp_path / "bad.npy"))


PEAK = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from sklearn import config_context
    from fastrbfkm import RBFKMeans

    def status(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    path, budget = sys.argv[1], float(sys.argv[2])
    X = np.load(path, mmap_mode="r")
    init = np.array(X[:6])
    RBFKMeans(6, assignment="hard", init=init, max_iter=2).fit(X[:5000])  # load the kernels
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak resident set size
    before = status("VmRSS")
    with config_context(working_memory=budget):
        km = RBFKMeans(6, assignment="hard", init=init, max_iter=5).fit(X)
    print(json.dumps({"growth": status("VmHWM") - before, "inertia": km.inertia_}))
    """
)


def test_peak_memory_is_bounded_by_the_block_size(tmp_path):
    """A 64 MiB file fitted with 4 MiB of working memory: the peak resident
    memory grows by the buffer, the labels (8 bytes a row) and the kernels'
    per-block arrays, not by the file. The same file fitted in memory (the
    working memory above its size) grows by the whole file: the measurement
    sees the difference."""
    n, d = 1 << 20, 8
    X = np.lib.format.open_memmap(tmp_path / "big.npy", mode="w+", dtype=np.float64, shape=(n, d))
    rng = np.random.default_rng(0)
    for s in range(0, n, 1 << 17):
        X[s : s + (1 << 17)] = rng.normal(size=(1 << 17, d)) + rng.integers(0, 6, (1 << 17, 1)) * 5
    X.flush()
    del X
    size = n * d * 8

    def growth(budget):
        script = [sys.executable, "-c", PEAK, str(tmp_path / "big.npy"), str(budget)]
        out = subprocess.run(script, capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    streamed, in_memory = growth(4), growth(1024)
    assert streamed["inertia"] == pytest.approx(in_memory["inertia"], rel=1e-9)
    labels = n * 8
    assert streamed["growth"] < 4 * 2**20 + labels + 16 * 2**20, streamed
    assert in_memory["growth"] > 0.9 * size, in_memory


@pytest.mark.parametrize("config", ["hard", "entmax15-anneal"])
def test_streamed_cosine_fit_equals_in_memory_fit(npy, config):
    """metric="cosine": every block is scaled to unit length as it is read,
    with the in-memory copy's arithmetic."""
    X = open_npy(npy)
    params = dict(FITS[config], metric="cosine", init=np.array(X[[0, 1, 2, 3, 4]]), random_state=0)
    ref = RBFKMeans(5, **params).fit(np.array(X))
    with config_context(working_memory=BUDGET):
        rows = open_rows(X, fit=True, metric="cosine")
        assert isinstance(rows, StreamedRows) and rows.sphere
        fit = RBFKMeans(5, **params).fit(X)
    np.testing.assert_allclose(fit.cluster_centers_, ref.cluster_centers_, rtol=0, atol=1e-9)
    assert fit.inertia_ == pytest.approx(ref.inertia_, rel=1e-9)
    np.testing.assert_array_equal(fit.labels_, ref.labels_)
    np.testing.assert_allclose(np.linalg.norm(fit.cluster_centers_, axis=1), 1.0, atol=1e-12)
