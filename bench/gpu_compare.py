"""The GPU section of bench/compare.py: one fit-loop step on an NVIDIA GPU.

Per step from the same centers, float32, data already on the device: our
device rows source's pass (``DeviceRows.stats``: upload C, the fused
distances -> assignment -> ``N_k``, ``S_k``, objective on the device, the
statistics back on the host), against the same step written in PyTorch CUDA
(``addmm`` distances, ``argmin`` + ``index_add`` for hard, ``softmax`` or the
entmax package's ``entmax15`` + ``R.T @ X`` for soft, results to the host
too) and against one cuBLAS GEMM ``X @ C.T`` (through torch), the floor of
any step. Medians over ``repeats`` runs after a warm-up (which compiles our
kernels). The data are generated on the GPU by torch and handed to
fastrbfkm through the CUDA array interface (no copy).

Targets (issue 7): hard step <= 1.5 GEMM at (1000000, 128, 1024); every soft
step faster than the PyTorch CUDA step at every shape.
"""

from __future__ import annotations

import time

import numpy as np

from fastrbfkm import _kernels as K

GPU_SHAPES = {
    "full": [(10_000_000, 32, 64), (1_000_000, 128, 1024), (1_000_000, 2, 8)],
    "small": [(1_000_000, 32, 64), (100_000, 128, 1024), (1_000_000, 2, 8)],
}


def gpu_present() -> bool:
    """Whether fastrbfkm can use a real CUDA GPU here."""
    try:
        from fastrbfkm import cuda
    except ImportError:
        return False
    return cuda.is_available()


def temperatures(D: np.ndarray) -> tuple[float, float]:
    """``(hot, cold)`` as the CPU section: the median squared distance (soft
    rows), and half the 1% quantile of the gap between a row's two nearest
    centers (99% of the rows one-hot for entmax15)."""
    hot = float(np.median(D))
    if D.shape[1] < 2:
        return hot, hot
    two = np.partition(D, 1, axis=1)[:, :2]
    return hot, max(float(np.quantile(two[:, 1] - two[:, 0], 0.01)) / 2, 1e-12 * hot)


def torch_step(torch, X, C, x2, mode, sigma, entmax):
    """The fused step in PyTorch CUDA: ``(N, S, F)`` on the host."""
    k = C.shape[0]
    D = torch.addmm(x2[:, None] + (C * C).sum(1)[None, :], X, C.T, alpha=-2.0).clamp_min_(0.0)
    if mode == K.HARD:
        dmin, labels = D.min(dim=1)
        N = dmin.new_zeros(k)
        N.index_add_(0, labels, torch.ones_like(dmin))
        S = torch.zeros_like(C).index_add_(0, labels, X)
        F = dmin.sum()
    elif mode == K.SOFTMAX:
        Z = D.mul_(-1.0 / sigma)
        R = torch.softmax(Z, dim=1)
        N, S = R.sum(0), R.T @ X
        F = -sigma * torch.logsumexp(Z, dim=1).sum()
    else:
        R = entmax.entmax15(D.mul_(-1.0 / sigma), dim=1)
        N, S = R.sum(0), R.T @ X
        F = -sigma * (R * D).sum() - sigma * (4.0 / 3.0) * (1.0 - R.pow(1.5).sum(1)).sum()
    return N.cpu(), S.cpu(), float(F)


def gpu_cases(torch, entmax, n, d, k, seed=0):
    """The timed callables for one shape (each returns once the GPU is done)."""
    from fastrbfkm.cuda.rows import DeviceRows

    gen = torch.Generator(device="cuda").manual_seed(seed)
    X = torch.randn(n, d, device="cuda", dtype=torch.float32, generator=gen)
    C = X[torch.randperm(n, device="cuda", generator=gen)[:k]].clone()
    Cn = C.cpu().numpy()
    rows = DeviceRows.from_input(X)  # the tensor's memory, in place
    hot, cold = temperatures(K.squared_distances(X[:4000].cpu().numpy(), Cn))
    x2 = (X * X).sum(1)

    def synced(f):
        def run():
            out = f()
            torch.cuda.synchronize()
            return out

        return run

    cases = {
        "cuBLAS GEMM X @ C.T": synced(lambda: X @ C.T),
        "ours hard": lambda: rows.stats(Cn, 0.0, K.HARD),
        "ours softmax": lambda: rows.stats(Cn, hot, K.SOFTMAX),
        "ours entmax15 hot": lambda: rows.stats(Cn, hot, K.ENTMAX15),
        "ours entmax15 cold": lambda: rows.stats(Cn, cold, K.ENTMAX15),
        "torch hard step": synced(lambda: torch_step(torch, X, C, x2, K.HARD, 0.0, None)),
        "torch softmax step": synced(lambda: torch_step(torch, X, C, x2, K.SOFTMAX, hot, None)),
    }
    if entmax is not None:
        cases["torch entmax15 step"] = synced(
            lambda: torch_step(torch, X, C, x2, K.ENTMAX15, hot, entmax)
        )
    return cases


def measure_gpu(cases, repeats):
    for f in cases.values():  # compile and warm up
        f()
    times = {name: [] for name in cases}
    for _ in range(repeats):
        for name, f in cases.items():
            start = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(ts)) for name, ts in times.items()}


PEER = {
    "ours hard": "torch hard step",
    "ours softmax": "torch softmax step",
    "ours entmax15 hot": "torch entmax15 step",
}


def gpu_section(torch, entmax, repeats: int, shapes: str = "full") -> list[str]:
    """Markdown lines of the GPU table and the targets' verdicts."""
    if torch is None or not torch.cuda.is_available():
        return ["", "GPU section: needs PyTorch with CUDA for its peers; skipped."]
    name = torch.cuda.get_device_name(0)
    lines = [
        "",
        f"GPU: {name}. Per step, float32, data on the device; ms are medians.",
        "",
        "| n, d, k | case | median ms | / GEMM | ours / torch step |",
        "|---|---|---|---|---|",
    ]
    verdicts = []
    for n, d, k in GPU_SHAPES[shapes]:
        result = measure_gpu(gpu_cases(torch, entmax, n, d, k), repeats)
        gemm = result["cuBLAS GEMM X @ C.T"]
        for case, t in result.items():
            peer = PEER.get(case)
            ratio = f"{t / result[peer]:.2f}" if peer in result else ""
            lines.append(f"| {n}, {d}, {k} | {case} | {1e3 * t:.2f} | {t / gemm:.2f} | {ratio} |")
        print("\n".join(lines[-len(result) :]), flush=True)
        if (n, d, k) == (1_000_000, 128, 1024):
            hard = result["ours hard"] / gemm
            verdicts.append(f"hard step / GEMM at {n}, {d}, {k}: {hard:.2f} (target <= 1.5)")
        for ours, peer in PEER.items():
            if ours != "ours hard" and peer in result:
                ratio = result[ours] / result[peer]
                verdicts.append(f"{ours} / {peer} at {n}, {d}, {k}: {ratio:.2f} (target < 1)")
    return lines + [""] + [f"- {v}" for v in verdicts]
