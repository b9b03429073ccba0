"""
The annealing path: centers splitting as the temperature falls
===============================================================

:func:`fastrbfkm.anneal` follows the soft solution of an RBF network from
above its critical temperature down toward the hard K-Means limit. All k
centers start on the mean of the data; above the critical temperature
``2 sqrt(k) lambda_max`` (entmax15, ``lambda_max`` the largest eigenvalue of
the data's covariance) that is the only stable solution, and below it the
centers split, again and again, at the critical temperatures of the clusters
they have found. The free energy ``F_sigma`` rises toward the K-Means
inertia ``J_KM`` as sigma falls, always below it.
"""

import matplotlib.pyplot as plt
import numpy as np

import fastrbfkm as fk
from fastrbfkm.datasets import make_blobs

X, _ = make_blobs(3000, centers=6, cluster_std=1.0, random_state=3)
k = 6
sigma_c = fk.critical_temperature(X, k, "entmax15")
sigmas = 1.25 * sigma_c * 0.85 ** np.arange(50)
C0 = np.repeat(X.mean(axis=0, keepdims=True), k, axis=0)  # every center on the mean
path = fk.anneal(X, C0, sigmas, "entmax15", random_state=0)
print(f"critical temperature {sigma_c:.3g}; active centers along the path: {path.n_active}")

# %%
# The centers' trajectories, colored by temperature, over the data.

fig, ax = plt.subplots(figsize=(6, 5.5))
ax.scatter(X[:, 0], X[:, 1], s=2, c="0.8")
norm = plt.matplotlib.colors.LogNorm(vmin=path.sigmas[-1], vmax=path.sigmas[0])
for j in range(k):
    ax.plot(path.centers[:, j, 0], path.centers[:, j, 1], c="0.4", lw=0.6)
points = ax.scatter(
    path.centers[:, :, 0].ravel(),
    path.centers[:, :, 1].ravel(),
    c=np.repeat(path.sigmas, k),
    norm=norm,
    s=10,
    cmap="viridis",
)
fig.colorbar(points, ax=ax, label="sigma")
ax.set_title("centers over the annealing (entmax15)")
ax.set_aspect("equal")

# %%
# The free energy and the inertia against the temperature, and the number
# of distinct centers: the splits are the steps of the lower panel.

fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.5, 6), sharex=True)
top.semilogx(path.sigmas, path.inertia, label="inertia J_KM")
top.semilogx(path.sigmas, path.objective, label="free energy F_sigma")
top.axvline(sigma_c, c="k", ls=":", lw=1, label="critical temperature")
top.set_ylabel("energy")
top.legend()
bottom.semilogx(path.sigmas, path.n_active, drawstyle="steps-post")
bottom.axvline(sigma_c, c="k", ls=":", lw=1)
bottom.set_xlabel("sigma")
bottom.set_ylabel("distinct centers")
bottom.invert_xaxis()  # time runs left to right: the temperature falls
plt.show()
