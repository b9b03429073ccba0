"""
Deep clustering: K-Means inside a neural network
================================================

Joint representation learning and clustering on scikit-learn's digits with
:class:`fastrbfkm.torch.RBFKMeansLayer`. A small autoencoder is trained on
reconstruction, then either

- two-stage (the baseline): trained on reconstruction for as many more epochs,
  then K-Means (``KMeans(n_init=10)``) on its codes; or
- jointly: reconstruction plus ``rbf_kmeans_loss`` of the codes against an
  ``RBFKMeansLayer`` (entmax15) whose centers start from an RBFKMeans fit of
  the codes, with sigma annealed geometrically toward 0; labels are the
  nearest centers.

Accuracy (Hungarian-matched), NMI and ARI against the true digits, mean and
standard deviation over seeds, and a figure of both. Runs offline on the CPU
(about 25 s with the defaults on a 2-core machine).

Usage: ``python examples/plot_deep_clustering.py [--seeds 5] [--epochs 40] [--weight 0.1]``
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.datasets import load_digits
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from torch import nn

from fastrbfkm.torch import RBFKMeansLayer

CODE = 10


def accuracy(y, labels) -> float:
    """Best one-to-one matching of clusters to classes."""
    k = max(y.max(), labels.max()) + 1
    counts = np.zeros((k, k))
    np.add.at(counts, (labels, y), 1)
    rows, cols = linear_sum_assignment(-counts)
    return counts[rows, cols].sum() / len(y)


class AutoEncoder(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(d, 128),
            nn.ReLU(),
            nn.Linear(128, 64),
            nn.ReLU(),
            nn.Linear(64, CODE),
            nn.BatchNorm1d(CODE, affine=False),  # fixes the codes' scale: no collapse
        )
        self.decoder = nn.Sequential(
            nn.Linear(CODE, 64),
            nn.ReLU(),
            nn.Linear(64, 128),
            nn.ReLU(),
            nn.Linear(128, d),
        )

    def forward(self, X):
        Z = self.encoder(X)
        return Z, self.decoder(Z)


def batches(n: int, size: int, gen: torch.Generator):
    order = torch.randperm(n, generator=gen)
    return [order[i : i + size] for i in range(0, n, size)]


def train(model, X, epochs, gen, layer=None, weight=0.0, cooling=1.0):
    params = list(model.parameters()) + (list(layer.parameters()) if layer else [])
    opt = torch.optim.Adam(params, lr=1e-3)
    for _ in range(epochs):
        model.train()
        for idx in batches(len(X), 256, gen):
            Z, Xr = model(X[idx])
            loss = nn.functional.mse_loss(Xr, X[idx])
            if layer is not None:
                loss = loss + weight * layer.loss(Z)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if layer is not None:
            layer.anneal(cooling)
    model.eval()


def codes(model, X):
    with torch.no_grad():
        return model(X)[0]


def run(seed: int, epochs: int, weight: float, X, y, k):
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = AutoEncoder(X.shape[1])
    train(model, X, epochs, gen)  # pretraining, shared by both
    # Two-stage: more reconstruction, then K-Means on the codes.
    base = copy.deepcopy(model)
    train(base, X, epochs, gen)
    labels = KMeans(k, n_init=10, random_state=seed).fit_predict(codes(base, X).numpy())
    two_stage = (
        accuracy(y, labels),
        normalized_mutual_info_score(y, labels),
        adjusted_rand_score(y, labels),
    )
    # Joint: reconstruction + clustering loss, sigma annealed 1000x over the epochs.
    Z = codes(model, X)
    layer = RBFKMeansLayer(k, CODE, sigma=2.0, assignment="entmax15")
    layer.init_from(Z, init="fit", random_state=seed)
    train(model, X, epochs, gen, layer, weight, cooling=1e-3 ** (1 / epochs))
    Z = codes(model, X)
    labels = ((Z[:, None, :] - layer.centers.detach()[None]) ** 2).sum(-1).argmin(1).numpy()
    joint = (
        accuracy(y, labels),
        normalized_mutual_info_score(y, labels),
        adjusted_rand_score(y, labels),
    )
    return two_stage, joint


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=40, help="per phase")
    parser.add_argument("--weight", type=float, default=0.1, help="clustering loss weight")
    args = parser.parse_args()
    torch.set_num_threads(max(1, torch.get_num_threads()))
    digits = load_digits()
    X = torch.tensor(digits.data / 16.0, dtype=torch.float32)
    y = digits.target
    start = time.perf_counter()
    results = [run(s, args.epochs, args.weight, X, y, 10) for s in range(args.seeds)]
    table = np.array(results)  # seeds x {two-stage, joint} x {acc, nmi, ari}
    print(
        f"digits, {args.seeds} seeds, {args.epochs} + {args.epochs} epochs, "
        f"clustering weight {args.weight}, {time.perf_counter() - start:.0f} s"
    )
    print("| method | accuracy | NMI | ARI |")
    print("|---|---|---|---|")
    for i, name in enumerate(["two-stage (AE, then KMeans)", "joint (AE + rbf_kmeans_loss)"]):
        mean, std = table[:, i].mean(0), table[:, i].std(0)
        print(
            f"| {name} | "
            + " | ".join(f"{m:.3f} +- {s:.3f}" for m, s in zip(mean, std, strict=True))
            + " |"
        )
    figure(table)


def figure(table) -> None:
    """Bars of the three scores, mean and standard deviation over the seeds."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # the table above is the result; the figure is optional
        return
    _, ax = plt.subplots(figsize=(6.5, 4))
    x = np.arange(3)
    for i, name in enumerate(["two-stage (AE, then KMeans)", "joint (AE + rbf_kmeans_loss)"]):
        mean, std = table[:, i].mean(0), table[:, i].std(0)
        ax.bar(x + 0.4 * i - 0.2, mean, 0.38, yerr=std, capsize=4, label=name)
    ax.set_xticks(x, ["accuracy", "NMI", "ARI"])
    ax.set_ylim(0, 1)
    ax.set_title(f"digits, {len(table)} seed(s)")
    ax.legend(loc="lower right")
    plt.show()


if __name__ == "__main__":
    main()
