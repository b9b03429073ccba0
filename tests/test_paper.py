"""The paper's reproduction: datasets, the quick run and what it reports."""

import sys

import numpy as np
import pytest

from fastrbfkm import datasets
from fastrbfkm.paper import QUICK, gd_against_lloyd, run_paper


@pytest.mark.parametrize(
    "make", [datasets.make_blobs, datasets.make_moons, datasets.make_spiral, datasets.make_circles]
)
def test_datasets_are_deterministic(make):
    X1, y1 = make(301, random_state=3)
    X2, y2 = make(301, random_state=3)
    X3, _ = make(301, random_state=4)
    assert X1.shape == (301, 2) and y1.shape == (301,)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.array_equal(X1, X3)
    assert make(10, dtype=np.float32)[0].dtype == np.float32


def test_dataset_shapes():
    X, y = datasets.make_circles(1000, factor=0.3, noise=0.0, random_state=0)
    radius = np.linalg.norm(X, axis=1)
    np.testing.assert_allclose(radius[y == 0], 1.0)
    np.testing.assert_allclose(radius[y == 1], 0.3)
    X, y = datasets.make_spiral(900, arms=3, noise=0.0, random_state=0)
    assert set(y) == {0, 1, 2} and np.linalg.norm(X, axis=1).max() <= 1.0
    X, y = datasets.make_moons(1000, noise=0.0, random_state=0)
    np.testing.assert_allclose(np.linalg.norm(X[y == 0], axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(X[y == 1] - [1.0, 0.5], axis=1), 1.0)


def test_gradient_descent_at_zero_temperature_is_lloyd():
    X, _ = datasets.make_moons(400, noise=0.1, random_state=1)
    C0 = X[:5].copy()
    for assignment in ("softmax", "entmax15"):
        diffs = gd_against_lloyd(X, C0, assignment, 15, 1e-12)
        assert diffs.max() <= 1e-12


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("paper")
    messages = []
    runs = run_paper(out, quick=True, log=messages.append)
    return out, runs, messages


def test_quick_run_writes_its_files(quick_run):
    out, runs, messages = quick_run
    text = (out / "results.md").read_text()
    for heading in (
        "Convergence of the annealed centers",
        "Gradient descent",
        "Gamma bounds",
        "Low temperature",
        "Critical temperature",
    ):
        assert heading in text
    rows = (out / "results.csv").read_text().splitlines()
    assert rows[0].startswith("dataset,assignment,sigma")
    assert len(rows) == 1 + sum(len(r.path) for r in runs)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert any("figures skipped" in m for m in messages)
    else:
        for name in ("blobs", "moons", "spiral", "circles"):
            assert (out / f"{name}.png").stat().st_size > 10_000


def test_quick_run_measures_what_the_paper_claims(quick_run):
    _, runs, _ = quick_run
    assert len(runs) == 8
    for r in runs:
        path = r.path
        assert len(path) >= 40 and path.sigmas[0] / path.sigmas[-1] >= 1e8
        assert r.bound_violations == 0
        assert r.gd_vs_lloyd.max() <= 1e-12
        # k centers on the mean become unstable at 2 lambda_max (softmax) and
        # 2 sqrt(k) lambda_max (entmax15), as docs/conventions.md derives.
        assert r.sigma_c_measured == pytest.approx(r.sigma_c_predicted, rel=0.02)
        # The annealed centers end on the K-Means fixed point C*.
        assert r.gap_C[-1] <= 1e-6 * np.abs(r.C_star).max()
        assert np.isfinite(r.sigma_hard)
        # Naive softmax breaks at low temperature; the stable one and entmax15 never.
        counts = np.array(list(r.stability.values()))
        assert counts[:, 1].sum() == 0 and counts[:, 2].sum() == 0
        assert counts[-1, 0] > 0
    # entmax15 becomes exactly hard at a higher temperature than softmax gets
    # within 1e-12 of hard.
    for name in ("blobs", "moons", "spiral", "circles"):
        soft, ent = [r for r in runs if r.dataset == name]
        assert ent.sigma_hard > soft.sigma_hard


def test_quick_run_without_matplotlib(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.delitem(sys.modules, "fastrbfkm.plotting", raising=False)
    messages = []
    import fastrbfkm.paper as paper

    monkeypatch.setattr(
        paper,
        "QUICK",
        QUICK.__class__(n_samples=120, temperatures=40, decades=8.0, tol=1e-12, max_iter=100),
    )
    paper.run_paper(tmp_path, quick=True, log=messages.append)
    assert any("figures skipped" in m for m in messages)
    assert (tmp_path / "results.md").exists() and not list(tmp_path.glob("*.png"))
