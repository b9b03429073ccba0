"""PyTorch layer: the RBF K-Means objective and responsibilities as
differentiable operations (``pip install "fastrbfkm[torch]"``).

CPU tensors (float32 and float64) run on the numba kernels through
``torch.autograd.Function``, viewing the tensors' memory as numpy arrays
without a copy; tensors on a GPU run on an equivalent pure-torch
implementation of the same formulas (docs/conventions.md). ``backend`` uses
the library's names: ``"auto"``, ``"cpu"``, ``"cuda"``. ``sigma`` is a constant of the
operation (a Python float or a 0-d tensor; no gradient flows into it).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from . import _kernels as K
from ._deprecation import REMOVED_IN, keyword_only, renamed, renamed_value, warn
from ._model import assignment_of, metric_of
from ._schedule import GeometricSchedule
from ._threads import one_blas_thread
from ._validation import check_assignment, check_value_range

__all__ = ["RBFKMeansLayer", "rbf_kmeans_loss", "responsibilities"]


# ----------------------------------------------------------------- checks


def _sigma(sigma) -> float:
    if isinstance(sigma, (torch.Tensor, np.ndarray)):
        # one number, as the numpy API takes it: not a 1-element vector
        if sigma.ndim != 0:
            raise ValueError(
                f"sigma must be a real number or a 0-d tensor; got shape {tuple(sigma.shape)}."
            )
        if isinstance(sigma, torch.Tensor):
            if sigma.is_complex() or sigma.dtype == torch.bool:
                raise TypeError(f"sigma must be a real number; got a {sigma.dtype} tensor.")
            sigma = sigma.detach().cpu().item()
        else:
            sigma = sigma[()]
    if isinstance(sigma, bool) or not isinstance(sigma, (int, float, np.floating, np.integer)):
        raise TypeError(f"sigma must be a real number; got {type(sigma).__name__}.")
    sigma = float(sigma)
    if not (math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be finite and >= 0; got {sigma!r}.")
    return sigma


def _mode_at(assignment: str, sigma: float) -> int:
    """The assignment's mode; ``sigma = 0`` is the hard limit for every
    assignment, as in the numpy API."""
    mode = check_assignment(assignment)
    return mode if sigma > 0 else K.HARD


def _check(X: torch.Tensor, C: torch.Tensor) -> float:
    """Check X and C; return a bound on their squared distances (``d`` times
    the square of the coordinates' spread, from the same pass)."""
    lows, highs = [], []
    for name, T in (("X", X), ("C", C)):
        if not isinstance(T, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor; got {type(T).__name__}.")
        if T.dim() != 2 or T.shape[0] == 0 or T.shape[1] == 0:
            raise ValueError(f"{name} must be a non-empty 2-D tensor; got shape {tuple(T.shape)}.")
        if not T.dtype.is_floating_point:
            raise TypeError(f"{name} must be a floating-point tensor; got {T.dtype}.")
        # finite, and small enough for squared distances, as in the numpy API
        lo, hi = torch.aminmax(T.detach())
        dtype = np.dtype(np.float64 if T.dtype == torch.float64 else np.float32)
        check_value_range(float(lo), float(hi), name, dtype, T, coordinates=True)
        lows.append(float(lo))
        highs.append(float(hi))
    if X.shape[1] != C.shape[1]:
        raise ValueError(f"C must have as many columns as X: {X.shape[1]} != {C.shape[1]}.")
    if X.device != C.device:
        raise ValueError(f"X and C must be on the same device; got {X.device} and {C.device}.")
    return X.shape[1] * (max(highs) - min(lows)) ** 2


def _weights(sample_weight, X: torch.Tensor) -> torch.Tensor | None:
    if sample_weight is None:
        return None
    w = torch.as_tensor(sample_weight, dtype=X.dtype, device=X.device)
    if w.shape != (X.shape[0],):
        raise ValueError(f"sample_weight must have shape ({X.shape[0]},); got {tuple(w.shape)}.")
    if not bool(torch.isfinite(w).all()) or bool((w < 0).any()) or not float(w.sum()) > 0:
        raise ValueError("sample_weight must be finite, non-negative, with a positive sum.")
    return w


def _numba_ready(T: torch.Tensor, dtype: torch.dtype) -> np.ndarray:
    """A C-contiguous numpy view (a copy only when the layout or dtype needs one)."""
    return T.detach().to(dtype).contiguous().numpy()


def _kernel_dtype(X: torch.Tensor) -> torch.dtype:
    return torch.float64 if X.dtype == torch.float64 else torch.float32


# ------------------------------------------------- tiny temperatures

#: Gradients with respect to the logits are at most about this large (a
#: softmax or entmax15 row's vector-Jacobian product is bounded by its
#: upstream gradient): where ``TINY_MARGIN / sigma`` overflows a dtype, the
#: derivatives in ``1 / sigma`` are computed in float64 and checked.
TINY_MARGIN = 2.0**16


def _tiny(sigma: float, dtype: torch.dtype) -> bool:
    """Whether ``sigma`` is so small that a gradient divided by it can
    overflow ``dtype`` (float64: below about 3.6e-304; float32: 1.9e-34;
    subnormal values of sigma included): then the logits and their gradients
    are computed in float64 (where ``0 / sigma`` is 0, never ``0 * inf``) and
    a gradient that still overflows is a ``ValueError`` naming sigma."""
    return 0 < sigma and sigma * torch.finfo(dtype).max < TINY_MARGIN


def _over_sigma(T: torch.Tensor, sigma: float, dtype: torch.dtype) -> torch.Tensor:
    """``T / sigma`` in ``dtype``, computed in float64 (a true division:
    zeros stay zeros at any sigma > 0); a ``ValueError`` naming sigma where
    a finite entry of T gives a quotient ``dtype`` cannot hold."""
    Q = T.to(torch.float64) / sigma
    out = Q.to(dtype)
    if not bool(torch.isfinite(out).all()) and bool(torch.isfinite(T).all()):
        raise ValueError(
            f"sigma={sigma!r} is too small for the gradient of the responsibilities: rows "
            "equidistant from two centers (a tie, or centers that coincide) have a derivative "
            f"of order 1/sigma, beyond {dtype}'s range. Use a larger sigma, or "
            "assignment='hard' (whose gradient is zero)."
        )
    return out


class _TinyLogits(torch.autograd.Function):
    """``Z = -G / sigma`` for ``G >= 0`` at a tiny ``sigma`` (:func:`_tiny`):
    float64 logits (``-inf`` where the quotient overflows, 0 where G is 0),
    and the gradient ``-g / sigma`` in G's dtype, checked."""

    @staticmethod
    def forward(ctx, G, sigma):
        ctx.sigma, ctx.dtype = sigma, G.dtype
        return -(G.to(torch.float64) / sigma)

    @staticmethod
    def backward(ctx, grad):
        return -_over_sigma(grad, ctx.sigma, ctx.dtype), None


# ------------------------------------------------------- numba (CPU) path


class _Loss(torch.autograd.Function):
    """F_sigma / W; the gradients by the envelope theorem:
    dF/dc_k = 2 (N_k c_k - S_k), dF/dx_i = 2 w_i (x_i - sum_k r_ik c_k)."""

    @staticmethod
    @one_blas_thread
    def forward(ctx, X, C, w, sigma, mode):
        dtype = _kernel_dtype(X)
        Xn, Cn = _numba_ready(X, dtype), _numba_ready(C, dtype)
        wn = np.empty(0) if w is None else w.detach().to(torch.float64).contiguous().numpy()
        xhat = None
        if ctx.needs_input_grad[0]:  # the reconstruction dF/dx needs, in the same pass
            N, S, summary, xhat = K.stats_and_reconstruction(Xn, Cn, wn, sigma, mode)
        else:
            N, S, summary = K.block_stats(Xn, Cn, wn, sigma, mode, True)
        total = float(wn.sum()) if w is not None else float(X.shape[0])
        ctx.save_for_backward(X, C)
        ctx.stats = (N, S, total, wn, xhat)
        return torch.tensor(summary[K.OBJECTIVE] / total, dtype=X.dtype)

    @staticmethod
    @one_blas_thread
    def backward(ctx, grad):
        X, C = ctx.saved_tensors
        N, S, total, wn, xhat = ctx.stats
        grad_X = grad_C = None
        scale = 2.0 * float(grad) / total
        if ctx.needs_input_grad[1]:
            Cd = C.detach().double().numpy()
            grad_C = torch.from_numpy(scale * (N[:, None] * Cd - S)).to(C.dtype)
        if ctx.needs_input_grad[0]:
            rows = _numba_ready(X, _kernel_dtype(X)) - xhat
            if wn.size:
                rows = rows * wn[:, None]
            grad_X = torch.from_numpy(scale * rows).to(X.dtype)
        return grad_X, grad_C, None, None, None


class _Responsibilities(torch.autograd.Function):
    """R = assignment(-D / sigma), backward through the assignment's
    vector-Jacobian product and the distances."""

    @staticmethod
    @one_blas_thread
    def forward(ctx, X, C, sigma, mode):
        dtype = _kernel_dtype(X)
        R = K.responsibilities(_numba_ready(X, dtype), _numba_ready(C, dtype), sigma, mode)
        R = torch.from_numpy(R).to(X.dtype)
        ctx.save_for_backward(X, C, R)
        ctx.sigma, ctx.mode = sigma, mode
        return R

    @staticmethod
    @one_blas_thread
    def backward(ctx, G):
        X, C, R = ctx.saved_tensors
        vjp = assignment_of(ctx.mode).vjp()
        if vjp is None:  # hard: piecewise constant
            return torch.zeros_like(X), torch.zeros_like(C), None, None
        dtype = _kernel_dtype(X)
        gz = vjp(_numba_ready(R, dtype), _numba_ready(G, dtype))
        gz = torch.from_numpy(gz).to(X.dtype)
        Cx = C.to(X.dtype)  # the forward pass measured C in X's dtype
        # z = -D / sigma: dz/dx = -(2 / sigma) (x - c_k), dz/dc_k = (2 / sigma) (x - c_k)
        along_X = X * gz.sum(dim=1, keepdim=True) - gz @ Cx
        along_C = gz.T @ X - gz.sum(dim=0)[:, None] * Cx
        if _tiny(ctx.sigma, X.dtype):  # 2 / sigma overflows: divide, in float64
            grad_X = -_over_sigma(2.0 * along_X.double(), ctx.sigma, X.dtype)
            grad_C = _over_sigma(2.0 * along_C.double(), ctx.sigma, X.dtype)
        else:
            c = 2.0 / ctx.sigma
            grad_X, grad_C = -c * along_X, c * along_C
        return grad_X, grad_C.to(C.dtype), None, None


# ------------------------------------------------------------ torch path


def torch_squared_distances(X: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """``||x - c||^2`` by the expansion around the centers' mean, clamped at 0."""
    mu = C.mean(dim=0, keepdim=True)
    Xc, Cc = X - mu, C - mu
    D = (Xc * Xc).sum(1, keepdim=True) - 2.0 * Xc @ Cc.T + (Cc * Cc).sum(1)[None, :]
    return D.clamp_min(0.0)


def torch_entmax15(Z: torch.Tensor, clamp: bool = True) -> torch.Tensor:
    """Exact sort-based Entmax-1.5 over the last axis, in torch ops.

    ``v = (z - max z) / 2`` below -1 is never in the support (the threshold
    is at least ``max v - 1``): with ``clamp`` such entries are clamped at
    -2, which keeps the cumulative sums finite for logits of any size
    (``-inf`` included) and changes neither the result nor its gradient;
    without, the squares of ``v`` must stay within Z's dtype."""
    v = (Z - Z.max(dim=-1, keepdim=True).values) / 2
    if clamp:
        v = v.clamp_min(-2.0)
    srt, _ = torch.sort(v, dim=-1, descending=True)
    rho = torch.arange(1, Z.shape[-1] + 1, dtype=Z.dtype, device=Z.device)
    mean = srt.cumsum(-1) / rho
    mean_sq = (srt * srt).cumsum(-1) / rho
    delta = (1 - rho * (mean_sq - mean * mean)) / rho
    tau = mean - torch.sqrt(delta.clamp_min(0))
    support = (tau <= srt).sum(dim=-1, keepdim=True)
    tau_star = tau.gather(-1, support - 1)
    return (v - tau_star).clamp_min(0) ** 2


def _plain(span2: float, sigma: float, dtype: torch.dtype) -> bool:
    """Whether ``-D / sigma`` is safe as it is: every squared distance
    (at most ``span2``, from :func:`_check`) over sigma, and its square in
    entmax15's sums, stay within ``dtype``'s range."""
    return span2 / sigma < math.sqrt(torch.finfo(dtype).max) / 4


def _torch_logits(D: torch.Tensor, sigma: float, span2: float) -> torch.Tensor:
    """The logits ``-D / sigma``. Where that could overflow (:func:`_plain`),
    ``Z = -(D - min_k D) / sigma`` instead: each row's largest logit exactly
    0, so that no row is all ``-inf`` (a NaN softmax); at a tiny sigma in
    float64 (:class:`_TinyLogits`). The shift is held fixed: softmax and
    entmax15 do not change with it, so its derivative is zero and autograd
    need not go through the minimum."""
    if _plain(span2, sigma, D.dtype) and not _tiny(sigma, D.dtype):
        return -D / sigma
    G = D - D.detach().min(dim=1, keepdim=True).values
    if _tiny(sigma, D.dtype):
        return _TinyLogits.apply(G, sigma)
    return -G / sigma


def _torch_assign(D: torch.Tensor, sigma: float, mode: int, span2: float) -> torch.Tensor:
    if mode == K.HARD:
        return nn.functional.one_hot(D.argmin(dim=1), D.shape[1]).to(D.dtype)
    Z = _torch_logits(D, sigma, span2)
    if mode == K.SOFTMAX:
        return torch.softmax(Z, dim=1).to(D.dtype)
    if mode == K.ENTMAX15:
        return torch_entmax15(Z, clamp=not _plain(span2, sigma, Z.dtype)).to(D.dtype)
    raise ValueError(f"no torch forward for assignment {assignment_of(mode).name!r}.")


def _entropy(R: torch.Tensor, mode: int) -> torch.Tensor:
    """Each row's entropy: Shannon's (softmax) or Tsallis-1.5 (entmax15)."""
    if mode == K.SOFTMAX:
        return -torch.special.xlogy(R, R).sum(1)
    if mode == K.ENTMAX15:
        return (4.0 / 3.0) * (1 - (R * R.clamp_min(0).sqrt()).sum(1))
    raise ValueError(f"no torch entropy for assignment {assignment_of(mode).name!r}.")


def _torch_loss(X, C, w, sigma, mode, span2):
    D = torch_squared_distances(X, C)
    if mode == K.HARD:
        rows = D.min(dim=1).values
    elif _tiny(sigma, D.dtype):
        # The envelope theorem: dF/dD = R exactly, R held fixed (the terms
        # through R's own derivative, of order 1 / sigma, cancel).
        R = _torch_assign(D.detach(), sigma, mode, span2)
        rows = (R * D).sum(1) - sigma * _entropy(R, mode)
    elif mode == K.SOFTMAX and _plain(span2, sigma, D.dtype):
        rows = -sigma * torch.logsumexp(-D / sigma, dim=1)
    elif mode == K.SOFTMAX:  # min D - sigma log sum exp(-(D - min D) / sigma), stably
        low = D.detach().min(dim=1).values  # the terms in min D cancel: held fixed
        rows = low - sigma * torch.logsumexp(_torch_logits(D, sigma, span2), dim=1)
    elif mode == K.ENTMAX15:
        R = torch_entmax15(_torch_logits(D, sigma, span2), not _plain(span2, sigma, D.dtype))
        rows = (R * D).sum(1) - sigma * _entropy(R, mode)
    else:
        raise ValueError(f"no torch loss for assignment {assignment_of(mode).name!r}.")
    if w is None:
        return rows.mean()
    return (w * rows).sum() / w.sum()


# ---------------------------------------------------------------- public


def _on_sphere(X: torch.Tensor, C: torch.Tensor, metric: str):
    """X and C through the metric's differentiable projection (its
    ``tensor``: X and C themselves for ``"euclidean"``; for ``"cosine"``
    their rows scaled to unit length by torch ops, so the gradients move
    along the sphere)."""
    project = metric_of(metric).tensor
    return project(X, "X"), project(C, "C")


@keyword_only
def rbf_kmeans_loss(
    X,
    C,
    sigma,
    assignment: str = "entmax15",
    *,
    sample_weight=None,
    backend: str = "auto",
    metric: str = "euclidean",
) -> torch.Tensor:
    """The clustering loss ``F_sigma(C) / sum(w)``, differentiable in X and C.

    Parameters
    ----------
    X : torch.Tensor of shape (n, d)
        Points (for instance an encoder's codes).
    C : torch.Tensor of shape (k, d)
        Centers.
    sigma : float or 0-d tensor
        Temperature >= 0, in units of squared distance; 0 is the hard limit
        (the K-Means inertia) for every assignment.
    assignment : {"entmax15", "softmax", "hard"}, default="entmax15"
        The assignment and its entropy (see docs/conventions.md).
    sample_weight : tensor of shape (n,), default=None
        Non-negative weights with a positive sum.
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where it runs, named as everywhere in the library: ``"cpu"`` on the
        numba CPU kernels (CPU tensors), ``"cuda"`` on the GPU (CUDA tensors,
        in torch ops), ``"auto"`` by the tensors' device (torch ops for any
        device but the CPU). The names before 0.2 work, with a
        ``FutureWarning``, until 0.3: ``"numba"`` is ``"cpu"``; ``"torch"``
        runs torch ops on any device.
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: the rows of X and C are used at unit length (scaled by
        differentiable torch ops, so the gradients move along the sphere),
        and ``D = 2 - 2 x.c``.

    Returns
    -------
    loss : 0-d tensor
        ``sum_i w_i [sum_k r_ik D_ik - sigma H(r_i)] / sum_i w_i``, X's dtype.
    """
    torch_ops = _use_torch(X, backend, "rbf_kmeans_loss")
    X, C = _on_sphere(X, C, metric)
    return _loss(X, C, sigma, assignment, sample_weight, torch_ops)


def _loss(X, C, sigma, assignment, sample_weight, torch_ops: bool) -> torch.Tensor:
    """:func:`rbf_kmeans_loss` in torch ops (the device path, which the tests
    and bench/torch_loss.py also run on CPU tensors) or on the numba kernels."""
    sigma = _sigma(sigma)
    mode = _mode_at(assignment, sigma)
    span2 = _check(X, C)
    w = _weights(sample_weight, X)
    if torch_ops:
        return _torch_loss(X, C, w, sigma, mode, span2)
    return _Loss.apply(X, C, w, sigma, mode)


@keyword_only
def responsibilities(
    X, C, sigma, assignment: str = "entmax15", *, backend: str = "auto", metric: str = "euclidean"
) -> torch.Tensor:
    """Responsibilities ``(n, k)``, differentiable in X and C.

    Parameters
    ----------
    X, C, sigma, assignment, backend, metric
        As in :func:`rbf_kmeans_loss`.

    Returns
    -------
    R : torch.Tensor of shape (n, k)
        Rows summing to 1 (hard: one-hot, with zero gradient).
    """
    torch_ops = _use_torch(X, backend, "responsibilities")
    X, C = _on_sphere(X, C, metric)
    return _responsibilities(X, C, sigma, assignment, torch_ops)


def _responsibilities(X, C, sigma, assignment, torch_ops: bool) -> torch.Tensor:
    """:func:`responsibilities` in torch ops or on the numba kernels (as :func:`_loss`)."""
    sigma = _sigma(sigma)
    mode = _mode_at(assignment, sigma)
    span2 = _check(X, C)
    if torch_ops:
        return _torch_assign(torch_squared_distances(X, C), sigma, mode, span2)
    return _Responsibilities.apply(X, C, sigma, mode)


#: The layer's backend names before 0.2 that still work, with a FutureWarning,
#: until ``REMOVED_IN``: ``"numba"`` is ``"cpu"``; ``"torch"`` (torch ops on any
#: device, CPU tensors included) has no new name of its own.
OLD_BACKENDS = {"numba": "cpu"}


def _use_torch(X: torch.Tensor, backend: str, where: str) -> bool:
    """Whether to run in torch ops (the device path) rather than the numba
    kernels; ``where`` (the public function's name) for the old names' warning."""
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string; got {type(backend).__name__}.")
    if backend == "torch":
        warn(
            f"{where}(): backend='torch' is deprecated and stops working in {REMOVED_IN}: "
            "write backend='auto' (torch ops on GPU tensors; on CPU tensors the numba "
            "kernels, which compute the same loss and gradients) or backend='cuda'."
        )
        if not isinstance(X, torch.Tensor):
            raise TypeError(f"X must be a torch.Tensor; got {type(X).__name__}.")
        return True  # as it did: torch ops on any device
    backend = renamed_value("backend", backend, OLD_BACKENDS, where)
    if backend not in ("auto", "cpu", "cuda"):
        raise ValueError(f"backend must be 'auto', 'cpu' or 'cuda'; got {backend!r}.")
    if not isinstance(X, torch.Tensor):
        raise TypeError(f"X must be a torch.Tensor; got {type(X).__name__}.")
    if backend != "auto" and X.device.type != backend:
        raise ValueError(f"backend={backend!r} needs {backend.upper()} tensors; got {X.device}.")
    return X.device.type != "cpu"


class RBFKMeansLayer(nn.Module):
    """K-Means as a layer: centers as a parameter, responsibilities as output.

    Parameters
    ----------
    n_clusters : int
        Number of centers k.
    n_features : int
        Dimension d of the inputs.
    sigma : float, default=1.0
        Temperature; lower it with :meth:`anneal`.
    assignment : {"entmax15", "softmax", "hard"}, default="entmax15"
        The assignment.
    metric : {"euclidean", "cosine"}, default="euclidean"
        ``"cosine"``: inputs and centers are used at unit length (the
        ``centers`` parameter itself is free; its rows' directions are the
        centers), as in :func:`rbf_kmeans_loss`.

    Attributes
    ----------
    centers : torch.nn.Parameter of shape (k, d)
        The centers.
    sigma : float
        The current temperature.
    """

    #: Layers pickled before the parameter existed are Euclidean.
    metric = "euclidean"

    def __init__(
        self,
        n_clusters: int,
        n_features: int,
        sigma: float = 1.0,
        assignment: str = "entmax15",
        metric: str = "euclidean",
    ):
        super().__init__()
        for name, value in (("n_clusters", n_clusters), ("n_features", n_features)):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise TypeError(f"{name} must be a positive integer; got {value!r}.")
            if value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}.")
        check_assignment(assignment)
        metric_of(metric)
        self.assignment = assignment
        self.metric = metric
        self.sigma = _sigma(sigma)
        self.centers = nn.Parameter(0.01 * torch.randn(int(n_clusters), int(n_features)))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Responsibilities of the centers for the rows of X."""
        return responsibilities(X, self.centers, self.sigma, self.assignment, metric=self.metric)

    def loss(self, X: torch.Tensor, sample_weight=None) -> torch.Tensor:
        """The clustering loss :func:`rbf_kmeans_loss` of X."""
        return rbf_kmeans_loss(
            X,
            self.centers,
            self.sigma,
            self.assignment,
            sample_weight=sample_weight,
            metric=self.metric,
        )

    @renamed(factor="cooling")
    def anneal(self, cooling: float = 0.8) -> float:
        """Lower the temperature one step: ``sigma *= cooling``, the next
        temperature of the estimators' geometric schedule.

        Parameters
        ----------
        cooling : float in (0, 1), default=0.8
            The factor, as the estimators' ``cooling``. Its old name
            ``factor`` still works, with a ``FutureWarning``, until 0.3.

        Returns
        -------
        sigma : float
            The new temperature (0 stays 0: the hard limit).

        Raises
        ------
        ValueError
            When ``cooling`` is not in (0, 1), or the step would take
            ``sigma`` to 0 (it stays where it is). Every positive float64
            sigma, down to the smallest subnormal (about 4.9e-324), is
            handled: forward and backward give the hard limit there (a
            gradient of the responsibilities beyond the float range, at a
            tie between two centers, is a ``ValueError`` naming sigma).
        """
        if not 0 < cooling < 1:
            raise ValueError(f"cooling must be in (0, 1); got {cooling!r}.")
        if self.sigma == 0:
            return 0.0
        sigma = GeometricSchedule(self.sigma, cooling).next(self.sigma)
        if not sigma > 0:
            raise ValueError(
                f"anneal({cooling!r}) would take sigma from {self.sigma!r} to 0 (underflow); "
                "sigma stays where it is. Use the hard assignment for the zero-temperature limit."
            )
        self.sigma = sigma
        return self.sigma

    @renamed(method="init")
    @keyword_only
    @torch.no_grad()
    @one_blas_thread
    def init_from(self, X: torch.Tensor, init: str = "k-means++", *, random_state=None):
        """Initialise the centers from data.

        Parameters
        ----------
        X : torch.Tensor of shape (n, n_features)
            Points (for instance an encoder's codes), read once, detached.
        init : str or array of shape (n_clusters, n_features), default="k-means++"
            A name of :data:`fastrbfkm.seeding.INITS`, the estimators'
            choices, seeded by the same dispatch
            (:func:`fastrbfkm.seeding.initial_centers`) over X in memory:
            ``"k-means++"``, greedy k-means++ on every row (as
            :func:`fastrbfkm.kmeans_plusplus`), ``"random"``, k distinct
            rows; given centers (copied); or ``"fit"``, the centers of a
            full fit of :class:`fastrbfkm.RBFKMeans` with the layer's
            assignment. Its old name ``method`` still works, with a
            ``FutureWarning``, until 0.3.
        random_state : int, numpy.random.RandomState or None, default=None
            Seed of the seeding or the fit (as scikit-learn's).

        Returns
        -------
        self : RBFKMeansLayer
            The layer, its centers set.

        Raises
        ------
        ValueError
            When ``init`` is none of these (the estimators' message).
        """
        Xn = X.detach().cpu().double().numpy()
        Xn = metric_of(self.metric).dense(Xn)
        if isinstance(init, str) and init == "fit":
            from .estimator import RBFKMeans

            km = RBFKMeans(
                self.centers.shape[0],
                assignment=self.assignment,
                random_state=random_state,
                metric=self.metric,
            ).fit(Xn)
            C = km.cluster_centers_
        else:
            from ._rows import in_memory
            from ._validation import as_float_array, check_generator
            from .seeding import initial_centers

            k = self.centers.shape[0]
            rows = in_memory(as_float_array(Xn, "X", coordinates=True, fitting=True), np.empty(0))
            if k > rows.n:  # as kmeans_plusplus, which the layer called
                raise ValueError(f"n_clusters must be in [1, n_samples={rows.n}]; got {k}.")
            rows.sampled_seeding = False  # every row, as the layer always seeded
            rng = check_generator(random_state)
            C = initial_centers(rows, k, init, rng, also=("fit",))
        self.centers.copy_(torch.as_tensor(C, dtype=self.centers.dtype))
        return self

    def extra_repr(self) -> str:
        """The layer's shape, temperature and assignment, for ``repr(layer)``."""
        k, d = self.centers.shape
        return (
            f"n_clusters={k}, n_features={d}, sigma={self.sigma:g}, assignment={self.assignment!r}"
            + (f", metric={self.metric!r}" if self.metric != "euclidean" else "")
        )
