"""Optional matplotlib figures (``pip install "fastrbfkm[plot]"``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from .functional import responsibilities

if TYPE_CHECKING:
    from .phases import PhaseDiagram

__all__ = ["paper_figures", "plot_phase_diagram", "plot_split_tree"]


def paper_figures(file: Path, name: str, X: np.ndarray, runs) -> None:
    """One PNG for a geometry: center trajectories over sigma, a soft and the
    hard partition, and the gaps to the K-Means fixed point against sigma."""
    by = {r.assignment: r for r in runs}
    main = by.get("entmax15", runs[0])
    fig, axes = plt.subplots(2, 2, figsize=(10, 9))
    ax = axes[0, 0]
    ax.scatter(X[:, 0], X[:, 1], s=3, c="0.8")
    p = main.path
    colors = plt.cm.viridis(np.linspace(0, 1, len(p)))
    for t in range(len(p)):
        ax.scatter(p.centers[t, :, 0], p.centers[t, :, 1], s=8, color=colors[t])
    sm = plt.cm.ScalarMappable(
        cmap="viridis", norm=matplotlib.colors.LogNorm(vmin=p.sigmas[-1], vmax=p.sigmas[0])
    )
    fig.colorbar(sm, ax=ax, label="sigma")
    ax.set_title(f"{name}: centers over the annealing ({main.assignment})")
    ax.set_aspect("equal")

    ax = axes[0, 1]
    t = int(np.argmin(np.abs(p.soft_fraction - 0.3) + 10 * (p.n_active < p.centers.shape[1])))
    R = responsibilities(X, p.centers[t], p.sigmas[t], main.assignment)
    base = plt.cm.tab10(R.argmax(axis=1) % 10)
    base[:, 3] = 0.15 + 0.85 * (R.max(axis=1) - 1 / R.shape[1]) / (1 - 1 / R.shape[1])
    ax.scatter(X[:, 0], X[:, 1], s=4, color=base)
    ax.scatter(p.centers[t, :, 0], p.centers[t, :, 1], marker="x", c="k")
    ax.set_title(
        f"soft partition at sigma={p.sigmas[t]:.3g} ({100 * p.soft_fraction[t]:.0f}% soft rows)"
    )
    ax.set_aspect("equal")

    ax = axes[1, 0]
    labels = responsibilities(X, main.C_star, 0.0, "hard").argmax(axis=1)
    ax.scatter(X[:, 0], X[:, 1], s=4, c=plt.cm.tab10(labels % 10))
    ax.scatter(main.C_star[:, 0], main.C_star[:, 1], marker="x", c="k")
    ax.set_title(f"hard partition at C* (J_KM = {main.J_star:.4g})")
    ax.set_aspect("equal")

    ax = axes[1, 1]
    for assignment, style in (("softmax", "tab:blue"), ("entmax15", "tab:red")):
        if assignment not in by:
            continue
        r = by[assignment]
        ok = r.gap_C > 0
        ax.loglog(
            r.path.sigmas[ok],
            r.gap_C[ok],
            "-o",
            ms=3,
            color=style,
            label=f"{assignment}: ||C_sigma - C*||",
        )
        ok = r.gap_F > 0
        ax.loglog(
            r.path.sigmas[ok],
            r.gap_F[ok],
            "--",
            color=style,
            label=f"{assignment}: |F_sigma - J_KM(C*)|",
        )
    ax.set_xlabel("sigma")
    ax.set_title("gaps to the K-Means fixed point")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(file, dpi=90)
    plt.close(fig)


def plot_phase_diagram(diagram: PhaseDiagram, ax=None):
    """Draw a phase diagram: distinct clusters and free energy against sigma.

    The number of distinct clusters is drawn as a step line against sigma
    on a log axis, decreasing to the right as in the annealing (the
    temperature falls from left to right); the recommended count's
    longest stretch is shaded; every split that lasted is marked at its
    observed critical temperature (a dot on the count line) and at its
    predicted one (a tick at the top); the free energy is on a second axis.

    Parameters
    ----------
    diagram : PhaseDiagram
        The result of :func:`fastrbfkm.phase_diagram` (or an estimator's
        ``phase_diagram_``).
    ax : matplotlib.axes.Axes, default=None
        Where to draw; None makes a new figure.

    Returns
    -------
    ax : matplotlib.axes.Axes
        The axes of the counts (the free energy's are ``ax.right_ax``).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    sigmas, counts = diagram.sigmas, diagram.n_clusters
    ax.step(sigmas, counts, where="post", color="tab:blue", label="distinct clusters")
    best = diagram.n_clusters_
    held = counts == best
    for t in np.flatnonzero(held[:-1]):
        ax.axvspan(sigmas[t + 1], sigmas[t], color="tab:blue", alpha=0.12, lw=0)
    observed = np.array([s.observed for s in diagram.splits])
    predicted = np.array([s.predicted for s in diagram.splits])
    if len(observed):
        at = np.interp(-np.log(observed), -np.log(sigmas), counts.astype(np.float64))
        ax.plot(observed, at, "o", ms=4, color="tab:red", label="split (observed)")
        ax.plot(
            predicted,
            np.full(len(predicted), diagram.max_clusters + 0.5),
            "|",
            ms=10,
            color="tab:red",
            label="split (predicted)",
        )
    ax.set_xscale("log")
    ax.set_xlim(sigmas[0], sigmas[-1])  # the temperature falls to the right
    ax.set_ylim(0, diagram.max_clusters + 1)
    ax.set_xlabel("sigma (temperature)")
    ax.set_ylabel("distinct clusters")
    ax.set_title(f"phase diagram: {best} clusters last longest")
    right = ax.twinx()
    right.plot(sigmas, diagram.objective, color="0.4", lw=1, ls="--", label="free energy")
    right.set_ylabel("free energy F_sigma")
    ax.right_ax = right
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="upper right")
    return ax


def plot_split_tree(diagram: PhaseDiagram, ax=None):
    """Draw the split tree of a phase diagram as a dendrogram.

    The leaves are the distinct centers at the end of the annealing
    (``diagram.cluster_centers``); two branches join at the temperature at
    which they split apart, on a log axis. The branches of the recommended
    count have their own colors.

    Parameters
    ----------
    diagram : PhaseDiagram
        The result of :func:`fastrbfkm.phase_diagram`.
    ax : matplotlib.axes.Axes, default=None
        Where to draw; None makes a new figure.

    Returns
    -------
    ax : matplotlib.axes.Axes
    """
    from scipy.cluster.hierarchy import dendrogram

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    L = diagram.linkage
    if len(L) == 0:
        raise ValueError("diagram has a single cluster: there is no tree to draw.")
    heights = np.sort(L[:, 2])
    n = diagram.n_clusters_
    # Color below the height that cuts the tree into n branches.
    cut = heights[-(n - 1)] if 1 < n <= len(heights) else heights[-1] * 2
    dendrogram(L, ax=ax, color_threshold=cut * 0.999, above_threshold_color="0.5")
    ax.set_yscale("log")
    ax.set_ylim(heights[0] / 2, heights[-1] * 2)  # the leaves stand at the coldest split
    ax.set_ylabel("sigma at which the branches split")
    ax.set_xlabel("distinct centers at the end of the annealing")
    ax.set_title(f"split tree ({n} branches colored)")
    return ax
