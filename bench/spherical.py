"""Spherical K-Means (``metric="cosine"``) against faiss and scikit-learn.

Usage::

    python bench/spherical.py                         # embedding-like and TF-IDF-like sets
    python bench/spherical.py --n 20000 --d 384 768 --k 20 200 --no-sparse

Embedding-like data: ``n`` rows around ``k`` random directions in ``d``
dimensions (noise scaled so that a row's cosine to its direction is about
0.5-0.6, as sentence embeddings of one topic), at unit length. TF-IDF-like
data: ``fastrbfkm.datasets``-free sparse topics (each of ``k`` topics draws
its words from its own 2% of a 20000-word vocabulary, plus common words),
rows scaled to unit length as ``TfidfVectorizer`` leaves them.

Each model fits once per set, in this process, one after another (times
are wall seconds: compare ratios measured in the same run):

- ``ours``: ``RBFKMeans(k, metric="cosine")``, the default annealed fit;
- ``ours-hard``: ``RBFKMeans(k, metric="cosine", assignment="hard")``;
- ``sk1`` / ``sk10``: scikit-learn ``KMeans(k, n_init=1 / 10)`` on the unit
  rows (dense data only for ``sk10`` above 20000 rows);
- ``faiss``: ``faiss.Kmeans(d, k, spherical=True, niter=25)`` training on
  every row (dense only).

The cosine objective is ``sum_i (1 - max_c x_i.c)`` at each method's centers
scaled to unit length; ``ARI`` is the agreement of the labels with the
generator's. The table (markdown) goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from machine import header, load_1min
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from fastrbfkm import RBFKMeans


def embeddings(n: int, d: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    axes = rng.normal(size=(k, d))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    y = rng.integers(k, size=n)
    X = axes[y] + 1.4 * rng.normal(size=(n, d)) / np.sqrt(d)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X.astype(np.float32), y


def tfidf(n: int, k: int, vocabulary: int = 20000, words: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    own = max(20, vocabulary // 50)
    topics = [rng.choice(vocabulary, size=own, replace=False) for _ in range(k)]
    y = rng.integers(k, size=n)
    rows, cols = [], []
    for i, t in enumerate(y):
        mine = rng.choice(topics[t], size=words // 2)
        common = rng.integers(vocabulary, size=words // 2)
        cols.append(np.unique(np.concatenate([mine, common])))
        rows.append(np.full(cols[-1].size, i))
    cols = np.concatenate(cols)
    M = sparse.csr_matrix(
        (rng.uniform(0.5, 2.0, size=cols.size), (np.concatenate(rows), cols)),
        shape=(n, vocabulary),
        dtype=np.float32,
    )
    norms = np.sqrt(np.asarray(M.multiply(M).sum(axis=1))).ravel()
    return sparse.diags(1.0 / norms).astype(np.float32) @ M, y


def cosine_objective(X, C) -> float:
    C = np.asarray(C, dtype=np.float64)
    C = C / np.linalg.norm(C, axis=1, keepdims=True)
    best = np.asarray(X @ C.T).max(axis=1)
    return float(np.sum(1.0 - best))


def fit(name: str, X, k: int):
    start = time.perf_counter()
    if name == "ours":
        model = RBFKMeans(k, metric="cosine", random_state=0).fit(X)
        C, labels = model.cluster_centers_, model.labels_
    elif name == "ours-hard":
        model = RBFKMeans(k, metric="cosine", assignment="hard", random_state=0).fit(X)
        C, labels = model.cluster_centers_, model.labels_
    elif name in ("sk1", "sk10"):
        model = KMeans(k, n_init=1 if name == "sk1" else 10, random_state=0).fit(X)
        C, labels = model.cluster_centers_, model.labels_
    else:
        import faiss

        km = faiss.Kmeans(
            X.shape[1], k, niter=25, spherical=True, seed=1, max_points_per_centroid=1 << 30
        )
        km.train(np.ascontiguousarray(X, dtype=np.float32))
        C = km.centroids
        labels = km.index.search(np.ascontiguousarray(X, dtype=np.float32), 1)[1].ravel()
    return time.perf_counter() - start, C, labels


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, nargs="+", default=[384, 768])
    parser.add_argument("--k", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--no-sparse", action="store_true")
    parser.add_argument("--models", default="ours,ours-hard,sk1,sk10,faiss")
    args = parser.parse_args(argv)
    models = args.models.split(",")
    try:
        import faiss  # noqa: F401
    except ImportError:
        models = [m for m in models if m != "faiss"]
    load_before = load_1min()
    lines = []
    sets = [(f"embeddings {args.n} x {d}", d, k) for d in args.d for k in args.k]
    if not args.no_sparse:
        sets += [(f"TF-IDF {args.n} x 20000", None, k) for k in args.k]
    for label, d, k in sets:
        X, y = embeddings(args.n, d, k) if d is not None else tfidf(args.n, k)
        results = {}
        for name in models:
            if name == "faiss" and sparse.issparse(X):
                continue
            seconds, C, labels = fit(name, X, k)
            results[name] = (seconds, cosine_objective(X, C), adjusted_rand_score(y, labels))
            print(f"{label}, k = {k}, {name}: {seconds:.2f} s", flush=True, file=sys.stderr)
        ref = results.get("sk10") or results.get("sk1")
        for name, (seconds, objective, ari) in results.items():
            lines.append(
                f"| {label} | {k} | {name} | {seconds:.2f} | {seconds / ref[0]:.2f} | "
                f"{objective:.2f} | {objective / ref[1]:.4f} | {ari:.3f} |"
            )
    import numba

    print(header(numba.threading_layer(), load_before, load_1min()))
    print()
    ref = "sk10" if "sk10" in models else "sk1"
    print(f"| data | k | model | s | s / {ref} | cosine objective | / {ref} | ARI |")
    print("|---|---|---|---|---|---|---|---|")
    print(*lines, sep="\n")


if __name__ == "__main__":
    main()
