"""Real text: the Python standard library's docstrings as TF-IDF rows.

Every docstring of the standard library's modules, their classes, functions
and methods (deduplicated; modules that open windows, start a browser or
print on import are left out) is vectorised by scikit-learn's
``TfidfVectorizer`` (unit rows, float64 CSR). Each model fits it with
``--seeds`` seeds, models alternating, in one process after a warm-up
(compilation excluded): the default ``RBFKMeans(k)``,
``RBFKMeans(k, assignment="hard")`` and scikit-learn's ``KMeans(k, n_init=1)``.
Printed per fit: seconds, inertia (recomputed in float64 at the model's
centers) and the share of rows in the largest cluster: a fit in which one
cluster holds most of the rows has found one topic-less mean and left the
other centers a few rows each.

Usage: ``python bench/text.py [--k 50] [--seeds 5] [--markdown FILE]``
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import io
import pkgutil
import sys
import time
import warnings
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
from machine import cpu_model, usable_cpus

#: Modules not imported: windows, browsers, sounds, prints or the test suite.
SKIP = {"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "test", "lib2to3"}


def _quietly_import(name: str):
    try:
        with (
            warnings.catch_warnings(),
            redirect_stdout(io.StringIO()),
            redirect_stderr(io.StringIO()),
        ):
            warnings.simplefilter("ignore")
            return importlib.import_module(name)
    except BaseException:  # platform-only modules, missing C libraries
        return None


def module_names() -> list[str]:
    """The standard library's public modules and their submodules, sorted."""
    names = []
    for name in sorted(sys.stdlib_module_names):
        if name in SKIP or name.startswith("_"):
            continue
        module = _quietly_import(name)
        if module is None:
            continue
        names.append(name)
        for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
            parts = info.name.split(".")
            if not any(p.startswith("_") or p in SKIP or p == "tests" for p in parts):
                names.append(info.name)
    return sorted(set(names))


def docstrings() -> list[str]:
    """The standard library's docstrings, in a fixed order, without repeats."""
    seen: dict[str, None] = {}
    for name in module_names():
        module = _quietly_import(name)
        if module is None:
            continue
        objects = [module]
        for _, member in inspect.getmembers(module):
            if (inspect.isclass(member) or inspect.isroutine(member)) and getattr(
                member, "__module__", None
            ) == name:
                objects.append(member)
                if inspect.isclass(member):
                    objects += [m for _, m in inspect.getmembers(member, inspect.isroutine)]
        with warnings.catch_warnings():  # deprecated aliases warn when read
            warnings.simplefilter("ignore")
            docs = [getattr(obj, "__doc__", None) for obj in objects]
        for doc in docs:
            if isinstance(doc, str) and len(doc.split()) >= 5:
                seen.setdefault(doc.strip(), None)
    return list(seen)


def inertia64(X, C: np.ndarray) -> tuple[float, float]:
    """``(inertia, share of rows in the largest cluster)`` at centers C."""
    C = np.asarray(C, dtype=np.float64)
    cross = np.asarray(X @ C.T)
    norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    D = np.maximum(norms[:, None] - 2 * cross + (C * C).sum(axis=1)[None, :], 0.0)
    labels = D.argmin(axis=1)
    return float(D.min(axis=1).sum()), float(np.bincount(labels).max() / X.shape[0])


def models(k: int, seed: int) -> dict:
    from sklearn.cluster import KMeans

    from fastrbfkm import RBFKMeans

    return {
        "RBFKMeans()": RBFKMeans(k, random_state=seed),
        'RBFKMeans(assignment="hard")': RBFKMeans(k, assignment="hard", random_state=seed),
        "KMeans(n_init=1)": KMeans(k, n_init=1, random_state=seed),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args()
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = docstrings()
    X = TfidfVectorizer().fit_transform(texts).astype(np.float64).tocsr()
    print(f"{X.shape[0]} docstrings x {X.shape[1]} terms, {X.nnz / X.shape[0]:.1f} nonzeros a row")
    print(f"machine: {cpu_model()}, {usable_cpus()} cores; python {sys.version.split()[0]}")
    for model in models(args.k, 0).values():  # compile (or load) the kernels
        model.fit(X[:2000])
    rows = []
    for seed in range(args.seeds):
        for name, model in models(args.k, seed).items():
            start = time.perf_counter()
            model.fit(X)
            seconds = time.perf_counter() - start
            inertia, largest = inertia64(X, model.cluster_centers_)
            rows.append((name, seed, seconds, inertia, largest))
            print(
                f"{name:30s} seed {seed}  {seconds:6.2f} s  inertia {inertia:9.2f}  "
                f"largest cluster {largest:.1%}",
                flush=True,
            )
    header = "| model | median s | median inertia | best inertia | a cluster over half the rows |"
    lines = [header, "|---|---|---|---|---|"]
    for name in models(args.k, 0):
        mine = [r for r in rows if r[0] == name]
        lines.append(
            f"| `{name}` | {np.median([r[2] for r in mine]):.2f} | "
            f"{np.median([r[3] for r in mine]):.1f} | {min(r[3] for r in mine):.1f} | "
            f"{sum(r[4] > 0.5 for r in mine)} of {len(mine)} |"
        )
    print("\n".join(lines))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
