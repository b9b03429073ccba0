"""
How many clusters: the phase diagram
====================================

Six Gaussian blobs of unequal sizes (100 to 400 points). The annealing,
with up to 12 centers, splits them at critical temperatures as it cools;
the number of distinct clusters that lasts longest in log sigma is the
count :func:`fastrbfkm.phase_diagram` recommends, and the one
``RBFKMeans(n_clusters="auto")`` fits. Left: the count against the
temperature (falling to the right), the splits at their observed (dots)
and predicted (ticks) critical temperatures, the free energy dashed.
Middle: the split tree, whose branches join at the temperature they split
apart. Right: the fit with the count it chose.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_blobs

import fastrbfkm as fk
from fastrbfkm.plotting import plot_phase_diagram, plot_split_tree

X, y = make_blobs(
    [300, 300, 300, 100, 100, 400], cluster_std=1.0, center_box=(-30, 30), random_state=0
)
diagram = fk.phase_diagram(X, max_clusters=12, random_state=0)
print(f"recommended: {diagram.n_clusters_} clusters (true: 6)")
print("persistence in log sigma:", {c: round(p, 2) for c, p in diagram.persistence.items()})

km = fk.RBFKMeans(n_clusters="auto", max_clusters=12, random_state=0).fit(X)

fig, axes = plt.subplots(1, 3, figsize=(16, 4.6))
plot_phase_diagram(diagram, ax=axes[0])
plot_split_tree(diagram, ax=axes[1])
ax = axes[2]
ax.scatter(X[:, 0], X[:, 1], s=3, c=plt.cm.tab10(km.labels_ % 10))
C = km.cluster_centers_
ax.scatter(C[:, 0], C[:, 1], marker="x", c="k")
ax.set_title(f'RBFKMeans(n_clusters="auto"): {km.n_clusters_} clusters')
ax.set_aspect("equal")
fig.tight_layout()
plt.show()

# %%
# Every split records the critical temperature predicted from its cell's
# covariance (twice its largest eigenvalue) and the one observed: the
# annealing tries a split from 1.25 times the prediction down and undoes
# those that close again, so a split with an earlier try that closed is
# bracketed between two temperatures.
ratios = np.array([s.predicted / s.observed for s in diagram.splits])
print(
    f"{len(ratios)} splits, predicted / observed: median {np.median(ratios):.3f}, "
    f"range {ratios.min():.3f} .. {ratios.max():.3f}"
)
