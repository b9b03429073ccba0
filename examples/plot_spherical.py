"""
Spherical K-Means: soft clusters on the sphere
==============================================

``metric="cosine"`` clusters directions: every row is used at unit length
and the centers stay on the unit sphere. Here 1500 points around four
directions in 3-D (at random lengths, which the metric ignores) are fitted
with the default annealed fit, then drawn on the sphere in the color of
their largest entmax15 responsibility at the fit's soft temperature, faded
where they are shared (points on the far side of the sphere are faint);
the black crosses are the centers on the near side. The right panel
shows the same fit's annealing: the temperatures at which the centers split
off, from one center at the mean's direction.
"""

import matplotlib.pyplot as plt
import numpy as np

import fastrbfkm as fk
from fastrbfkm import RBFKMeans

rng = np.random.default_rng(0)
directions = np.array([[1.0, 0.2, 0.1], [-0.3, 1.0, 0.2], [0.1, -0.4, 1.0], [-0.6, -0.7, -0.5]])
directions /= np.linalg.norm(directions, axis=1, keepdims=True)
y = rng.integers(4, size=1500)
X = (directions[y] + 0.3 * rng.normal(size=(1500, 3))) * rng.uniform(0.5, 3.0, size=(1500, 1))

km = RBFKMeans(4, metric="cosine", record_path=True, refine=True, random_state=0).fit(X)
C = km.cluster_centers_
U = X / np.linalg.norm(X, axis=1, keepdims=True)
R = fk.responsibilities(X, C, km.soft_sigma_, "entmax15", metric="cosine")

fig = plt.figure(figsize=(11, 5))
ax = fig.add_subplot(1, 2, 1, projection="3d")
u, v = np.mgrid[0 : 2 * np.pi : 40j, 0 : np.pi : 20j]
ax.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v), color="0.85", lw=0.4)
elev, azim = np.radians(25), np.radians(20)
toward = np.array([np.cos(elev) * np.cos(azim), np.cos(elev) * np.sin(azim), np.sin(elev)])
front = U @ toward > 0  # the hemisphere facing the viewer; the far side faint
colors = plt.cm.tab10(R.argmax(axis=1)).copy()
colors[:, 3] = (0.15 + 0.85 * (R.max(axis=1) - 0.25) / 0.75) * np.where(front, 1.0, 0.08)
ax.scatter(*U.T, s=5, color=colors, depthshade=False)
near = C @ toward > 0
ax.scatter(*(1.02 * C[near]).T, marker="X", s=140, c="k", depthshade=False)
ax.view_init(elev=25, azim=20)
ax.set_box_aspect((1, 1, 1), zoom=1.45)
ax.set_axis_off()
ax.set_title(f"entmax15 at sigma = {km.soft_sigma_:.3g} (concentration {2 / km.soft_sigma_:.3g})")

path = km.path_
ax = fig.add_subplot(1, 2, 2)
ax.step(path.sigmas, path.n_active, where="post")
ax.axvline(km.sigma_critical_, color="0.5", ls="--", label="critical temperature on the sphere")
ax.set_xscale("log")
ax.invert_xaxis()
ax.set_xlabel("sigma (cooling to the right)")
ax.set_ylabel("distinct centers")
ax.legend(loc="upper left")
fig.tight_layout()
print(
    f"cosine objective sum(1 - x.c) = {km.inertia_:.2f}; center lengths "
    f"{np.linalg.norm(C, axis=1).round(6).tolist()}"
)
plt.show()
