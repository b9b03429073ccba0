"""Data with more modes than centers: the sets of ``bench/any_k.py``.

Users cluster data that has no blob per center: index training,
colour quantization and embeddings all ask for k centers on data with
many more modes than that, of mixed sizes and shapes. Every generator here
is seeded and uses numpy only (the photographs and nothing else come from
scikit-learn's bundled files); each returns the rows alone, as a user has
them (no true labels: there is no "right" clustering with fewer centers
than modes).

``iso``
    Isotropic Gaussian modes of equal size: means ``N(0, I_d)``, standard
    deviation 0.35 per feature.
``aniso``
    The data of the annealing-at-any-k issue: anisotropic Gaussian modes
    (means ``N(0, I_d)``, per-feature standard deviations ``U(0.2, 0.6)``)
    whose sizes are Dirichlet(1)-mixed, from a few rows to several times
    the mean.
``sphere``
    Embedding-like unit rows: the modes are unit directions lying in
    ``max(2, modes // 16)`` random 8-dimensional subspaces (topics), each
    mode's rows its direction plus Gaussian noise in its subspace (0.25
    per axis) and a little in every feature (0.02), scaled to unit length;
    Dirichlet(1) sizes. Fitted with ``metric="euclidean"`` and
    ``metric="cosine"``.
``china``, ``flower``
    scikit-learn's sample photographs (427 x 640 RGB) as 273280 rows of
    pixels in [0, 1] (colour quantization).
``topics``
    A TF-IDF-like CSR matrix with topics: every row mixes a topic's
    vocabulary (200 terms of a Zipf-like vocabulary drawn per topic) with
    the common vocabulary, Poisson(40) terms a row, idf-weighted and scaled
    to unit length (float64, the layout of scikit-learn's
    ``TfidfVectorizer``).
"""

from __future__ import annotations

import numpy as np

#: Seed of every generator.
SEED = 20261206


def dirichlet_labels(n: int, modes: int, rng: np.random.Generator, mixed: bool) -> np.ndarray:
    """Mode labels of n rows: equal sizes (a shuffled round robin), or
    Dirichlet(1)-mixed sizes (some modes empty or nearly)."""
    if not mixed:
        return rng.permutation(np.arange(n) % modes)
    return rng.choice(modes, size=n, p=rng.dirichlet(np.ones(modes)))


def gaussian_modes(
    n: int,
    d: int,
    modes: int,
    anisotropic: bool,
    seed: int = SEED,
    dtype=np.float32,
    return_labels: bool = False,
):
    """``iso`` (``anisotropic=False``) or ``aniso`` rows (see the module);
    with ``return_labels``, ``(X, labels)``: each row's mode too."""
    rng = np.random.default_rng(seed)
    means = rng.normal(size=(modes, d))
    labels = dirichlet_labels(n, modes, rng, mixed=anisotropic)
    if anisotropic:
        std = rng.uniform(0.2, 0.6, size=(modes, d))[labels]
    else:
        std = 0.35
    X = (means[labels] + std * rng.normal(size=(n, d))).astype(dtype)
    return (X, labels) if return_labels else X


def sphere_modes(n: int, d: int, modes: int, seed: int = SEED, dtype=np.float32) -> np.ndarray:
    """``sphere`` rows (see the module)."""
    rng = np.random.default_rng(seed)
    topics = max(2, modes // 16)
    dim = min(8, d)
    bases = np.linalg.qr(rng.normal(size=(topics, d, dim)))[0]  # (topics, d, dim)
    topic = rng.integers(topics, size=modes)
    inner = rng.normal(size=(modes, dim))
    inner /= np.linalg.norm(inner, axis=1, keepdims=True)
    directions = np.einsum("mdj,mj->md", bases[topic], inner)
    labels = dirichlet_labels(n, modes, rng, mixed=True)
    local = np.einsum("ndj,nj->nd", bases[topic[labels]], 0.25 * rng.normal(size=(n, dim)))
    X = directions[labels] + local + 0.02 * rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X.astype(dtype)


def photo(name: str) -> np.ndarray:
    """A scikit-learn sample photograph's pixels as float32 rows in [0, 1]."""
    from sklearn.datasets import load_sample_image

    image = load_sample_image(f"{name}.jpg")
    return (image.reshape(-1, 3) / 255.0).astype(np.float32)


def topic_tfidf(n: int, d: int, topics: int, seed: int = SEED):
    """``topics`` rows (see the module): a float64 CSR matrix of unit rows."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    zipf = 1.0 / (np.arange(d) + 10.0)
    zipf /= zipf.sum()
    words = np.stack([rng.choice(d, size=200, replace=False, p=zipf) for _ in range(topics)])
    label = rng.integers(topics, size=n)
    lengths = rng.poisson(40.0, n)
    own = rng.random(int(lengths.sum())) < 0.6  # a term from the row's topic, else common
    row = np.repeat(np.arange(n), lengths)
    common = rng.choice(d, size=own.size, p=zipf)
    topical = words[label[row], rng.integers(200, size=own.size)]
    columns = np.where(own, topical, common)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    M = sparse.csr_matrix((rng.random(columns.size) + 0.1, columns, indptr), shape=(n, d))
    M.sum_duplicates()
    idf = np.log(n / (1.0 + np.bincount(M.indices, minlength=d)))
    M = (M @ sparse.diags(idf)).tocsr()
    norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1))).ravel()
    return (sparse.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ M).tocsr()
