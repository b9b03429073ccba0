"""
Soft and hard assignments on the same data
==========================================

The same fitted centers give three assignments: hard (K-Means: the nearest
center), softmax (dense: every center gets a share) and entmax15 (sparse:
centers far from a row get exactly zero). Each point is drawn in the color
of its largest responsibility, faded by how shared it is; the last panel
counts the centers in each row's entmax15 support.
"""

import matplotlib.pyplot as plt
import numpy as np

import fastrbfkm as fk
from fastrbfkm import RBFKMeans
from fastrbfkm.datasets import make_blobs

X, _ = make_blobs(4000, centers=5, cluster_std=1.6, random_state=1)
km = RBFKMeans(n_clusters=5, random_state=0).fit(X)
C = km.cluster_centers_
sigma = 4 * km.soft_sigma_  # soft enough for the boundaries to show

fig, axes = plt.subplots(2, 2, figsize=(9, 8.5))
palette = plt.cm.tab10(np.arange(5))
for ax, assignment in zip(axes.flat[:3], ["hard", "softmax", "entmax15"], strict=True):
    R = fk.responsibilities(X, C, 0.0 if assignment == "hard" else sigma, assignment)
    colors = palette[R.argmax(axis=1)].copy()
    colors[:, 3] = 0.1 + 0.9 * (R.max(axis=1) - 0.2) / 0.8  # faded where shared
    ax.scatter(X[:, 0], X[:, 1], s=4, color=colors)
    ax.scatter(C[:, 0], C[:, 1], marker="x", c="k")
    ax.set_title(f"{assignment}" + ("" if assignment == "hard" else f", sigma = {sigma:.3g}"))
    ax.set_aspect("equal")

R = fk.responsibilities(X, C, sigma, "entmax15")
support = (R > 0).sum(axis=1)
ax = axes[1, 1]
points = ax.scatter(X[:, 0], X[:, 1], s=4, c=support, cmap="viridis", vmin=1, vmax=support.max())
fig.colorbar(points, ax=ax, label="centers in the row's support", ticks=range(1, support.max() + 1))
ax.set_title("entmax15: sparse rows")
ax.set_aspect("equal")
fig.tight_layout()
print(f"entmax15 rows keep {support.mean():.2f} centers on average (softmax: all 5)")
plt.show()
