"""Optional matplotlib figures (``pip install "fastrbfkm[plot]"``)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from .functional import responsibilities


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
