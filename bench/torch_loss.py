"""Forward + backward of ``rbf_kmeans_loss`` on the numba path against the same
loss in plain torch ops (the formulas the layer runs on a GPU), CPU, a batch
of 4096 x 64 features and 64 centers.

Usage: ``python bench/torch_loss.py [--repeats 21]``; alternating runs, medians.
"""

import argparse
import time

import numpy as np
import torch

from fastrbfkm.torch import _loss


def table(repeats: int) -> list[str]:
    """The markdown table: medians of ``repeats`` alternating runs."""
    g = torch.Generator().manual_seed(0)
    lines = [
        "| dtype | assignment | numba ms | torch ms | numba / torch |",
        "|---|---|---|---|---|",
    ]
    for dtype in (torch.float32, torch.float64):
        X = torch.randn(4096, 64, generator=g, dtype=dtype, requires_grad=True)
        C = torch.randn(64, 64, generator=g, dtype=dtype, requires_grad=True)
        sigma = 64.0  # about the spread of the squared distances: a soft regime
        for assignment in ("softmax", "entmax15"):

            def run(backend, assignment=assignment, X=X, C=C, sigma=sigma):
                X.grad = C.grad = None
                _loss(X, C, sigma, assignment, None, torch_ops=backend == "torch").backward()

            times = {"numba": [], "torch": []}
            for backend in times:
                run(backend)
            for _ in range(repeats):
                for backend, ts in times.items():
                    start = time.perf_counter()
                    run(backend)
                    ts.append(time.perf_counter() - start)
            a, b = np.median(times["numba"]), np.median(times["torch"])
            lines.append(
                f"| {str(dtype).split('.')[-1]} | {assignment} | {1e3 * a:.2f} | "
                f"{1e3 * b:.2f} | {a / b:.2f} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    print("\n".join(table(args.repeats)))


if __name__ == "__main__":
    main()
