"""One init dispatch for every rows source and the torch layer.

:func:`fastrbfkm.seeding.initial_centers` maps ``init`` to its seeding
through the table :data:`fastrbfkm.seeding.INITS`; the sources provide only
primitives. So every source (dense and CSR in memory, streamed from a file,
Dask chunks) and the torch layer's ``init_from`` take the same names (a name
added to the table is taken by all of them) and reject a bad one with the
same ``ValueError`` naming ``init``.
"""

import numpy as np
import pytest
from scipy import sparse

import fastrbfkm.seeding as seeding
from fastrbfkm._base import BaseRBFKMeans
from fastrbfkm._rows import InMemoryRows, SparseRows
from fastrbfkm._streaming import StreamedRows
from fastrbfkm._validation import as_csr

from .helpers import make_problem

N, D, K = 60, 3, 4
SOURCES = ["dense", "csr", "streamed", "dask", "torch"]


def seeder(kind, X, tmp_path):
    """``seed(init, rng_seed) -> (K, D)`` centers through the source ``kind``."""
    if kind == "dense":
        return lambda init, seed: InMemoryRows(X, np.empty(0)).initial_centers(
            K, init, np.random.default_rng(seed)
        )
    if kind == "csr":
        M = as_csr(sparse.csr_matrix(X), "X", fitting=True)
        return lambda init, seed: SparseRows(M, np.empty(0)).initial_centers(
            K, init, np.random.default_rng(seed)
        )
    if kind == "streamed":
        np.save(tmp_path / "X.npy", X)
        mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
        return lambda init, seed: StreamedRows(mapped, np.empty(0), block_rows=7).initial_centers(
            K, init, np.random.default_rng(seed)
        )
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        from fastrbfkm.dask import make_rows

        def seed_dask(init, seed):
            import dask

            with dask.config.set(scheduler="sync"):
                rows = make_rows(da.from_array(X, chunks=(9, D)), None)
                return rows.initial_centers(K, init, np.random.default_rng(seed))

        return seed_dask
    torch = pytest.importorskip("torch")
    from fastrbfkm.torch import RBFKMeansLayer

    def seed_torch(init, seed):
        layer = RBFKMeansLayer(K, D, sigma=1.0).double()
        layer.init_from(torch.tensor(X), init=init, random_state=seed)
        return layer.centers.detach().numpy()

    return seed_torch


@pytest.fixture
def X():
    return make_problem(N, D, K, seed=8)[0].astype(np.float64)


@pytest.mark.parametrize("kind", SOURCES)
@pytest.mark.parametrize("init", list(seeding.INITS))
def test_every_source_takes_every_name_of_the_table(kind, init, X, tmp_path):
    C = seeder(kind, X, tmp_path)(init, 3)
    assert C.shape == (K, D)
    assert all((X == c).all(axis=1).any() for c in C)  # rows of X
    assert len(np.unique(C, axis=0)) == K
    if kind in ("csr", "torch"):  # the dense source's draws and seeds
        np.testing.assert_array_equal(C, seeder("dense", X, tmp_path)(init, 3))


@pytest.mark.parametrize("kind", SOURCES)
def test_a_name_added_to_the_table_is_taken_everywhere(kind, X, tmp_path, monkeypatch):
    """Adding an init is one entry of INITS: every source and the layer
    dispatch to it, with the source itself and k."""
    seen = []

    def first_rows(rows, k, rng):
        seen.append(k)
        return rows.draw(k, 0)  # a primitive every source has

    monkeypatch.setitem(seeding.INITS, "first-rows", first_rows)
    C = seeder(kind, X, tmp_path)("first-rows", 0)
    assert seen == [K]
    np.testing.assert_array_equal(C, seeder("dense", X, tmp_path)("first-rows", 0))


@pytest.mark.parametrize("bad", ["kmeans++", "fit", "", "K-MEANS++"])
def test_every_source_rejects_a_bad_name_with_the_same_error(bad, X, tmp_path):
    messages = {}
    for kind in SOURCES:
        if kind == "torch" and bad == "fit":
            continue  # the layer's own choice: a full fit
        with pytest.raises(ValueError, match=r"^init must be one of 'k-means\+\+', 'random'") as e:
            seeder(kind, X, tmp_path)(bad, 0)
        messages[kind] = str(e.value)
    assert len(messages) >= 4
    tail = f"or an array of shape ({K}, {D}); got {bad!r}."
    assert all(message.endswith(tail) for message in messages.values()), messages
    rows = {m for kind, m in messages.items() if kind != "torch"}
    assert len(rows) == 1, messages  # the sources: word for word
    if "torch" in messages:  # the layer names its "fit" too
        assert messages["torch"] == rows.pop().replace("'random'", "'random', 'fit'")


@pytest.mark.parametrize("kind", SOURCES)
def test_given_centers_of_the_wrong_shape_are_rejected(kind, X, tmp_path):
    with pytest.raises(ValueError, match=r"^init must be one of .* got an array of shape \(3, 3\)"):
        seeder(kind, X, tmp_path)(X[:3].copy(), 0)
    np.testing.assert_array_equal(seeder(kind, X, tmp_path)(X[:K].copy(), 0), X[:K])


def test_the_estimators_check_init_against_the_table():
    (names, *_) = BaseRBFKMeans._shared_constraints["init"]
    assert set(names.options) == set(seeding.INITS)


def test_the_layer_needs_as_many_rows_as_clusters(X):
    torch = pytest.importorskip("torch")
    from fastrbfkm.torch import RBFKMeansLayer

    for init in seeding.INITS:
        with pytest.raises(ValueError, match=r"n_clusters must be in \[1, n_samples=3\]; got 4"):
            RBFKMeansLayer(K, D, sigma=1.0).init_from(torch.tensor(X[:3]), init=init)
