"""Exact Entmax-1.5 over a block of rows of energies, and its backward.

With logits ``z = -e / sigma`` the row is ``r_k = [z_k / 2 - tau]_+^2`` where
``tau`` makes it sum to 1 (Peters, Niculae and Martins, 2019). We work with
the shifted half-logits ``v_k = -(e_k - emin) / (2 sigma) <= 0`` (entmax is
shift invariant). Only entries with ``v_k >= -1`` (``z_k >= max z - 2``) can
be in the support. The threshold is found by a certified Newton search
(exactly the sorted formula on the support it proves), and by sorting the
candidates only when that search cannot certify.
"""

import math

import numpy as np
from numba import njit, prange

#: Candidate lists at most this long are sorted by insertion.
_INSERTION_SORT_MAX = 24
#: Newton steps before falling back to sorting.
_NEWTON_STEPS = 30


# The row functions below (half_gap to newton_next) are the only copy of
# entmax15's scalar steps: the CUDA kernels (fastrbfkm.cuda.assignment) call
# these @njit functions too, and numba compiles a @jit function called from a
# CUDA kernel as a device function. They therefore take scalars and small
# work arrays only (never a device array, which the CUDA simulator cannot hand
# to CPU code), and use nothing a GPU thread lacks (no allocation, no sort).
# Nor the builtins max and min: the CUDA target built into numba 0.68 (not
# numba-cuda, which the cuda extra installs) types max(a, b) in device code as
# its one-argument (iterable) form and fails; a conditional expression does not.


@njit(cache=True)
def half_gap(e, emin, sigma):
    """``g = (e - emin) / (2 sigma) >= 0``, the negated shifted half-logit;
    exact ties give 0 even where ``0.5 / sigma`` overflows (subnormal sigma)."""
    a = e - emin
    return a * (0.5 / sigma) if a > 0.0 else 0.0


@njit(cache=True)
def insertion_sort(g, m):
    """Sort ``g[:m]`` ascending in place (short candidate lists)."""
    for i in range(1, m):
        x = g[i]
        j = i - 1
        while j >= 0 and g[j] > x:
            g[j + 1] = g[j]
            j -= 1
        g[j + 1] = x


@njit(cache=True)
def set_moments(count, s1, s2):
    """The sorted formula over a set of ``count`` half-logits with sum ``s1``
    and sum of squares ``s2``: ``(mean, delta)``, its threshold being
    ``tau = mean - sqrt(delta)`` (``delta = (1 - s2) / count + mean^2``)."""
    inv = 1.0 / count
    mean = s1 * inv
    return mean, (1.0 - s2) * inv + mean * mean


@njit(cache=True)
def walk_step(rho, s1, s2, v):
    """One step of the sorted walk: ``(mean, delta, ok)`` over the ``rho``
    largest half-logits (sums ``s1``, ``s2``), the smallest of them ``v``;
    ``ok`` when ``v`` is in the support (``tau_rho <= v``, i.e.
    ``mean - v <= sqrt(delta)``)."""
    mean, delta = set_moments(rho, s1, s2)
    gap = mean - v
    return mean, delta, gap <= 0.0 or (delta > 0.0 and gap * gap <= delta)


@njit(cache=True)
def sorted_walk(g, m):
    """The threshold over the candidates ``g[:m]`` (``g = -v``), sorted
    ascending (descending v): walk with the running sums of ``v_(1..rho)``
    while :func:`walk_step` keeps ``v_(rho)`` in the support. That holds for
    rho = 1 (``tau_1 = v_(1) - 1``) and, once it fails, for no larger rho."""
    s1 = 0.0
    s2 = 0.0
    mean_star = 0.0
    delta_star = 1.0
    for rho in range(1, m + 1):
        v = -g[rho - 1]
        s1 += v
        s2 += v * v
        mean, delta, ok = walk_step(rho, s1, s2, v)
        if not ok:
            break
        mean_star = mean
        delta_star = delta
    return mean_star - math.sqrt(delta_star if delta_star > 0.0 else 0.0)


@njit(cache=True)
def set_threshold(count, s1, s2):
    """``tau_S = mean_S - sqrt(delta_S)`` of a set S (:func:`set_moments`),
    or ``-inf`` where ``delta_S < 0`` (no threshold makes S sum to 1)."""
    mean, delta = set_moments(count, s1, s2)
    return mean - math.sqrt(delta) if delta >= 0.0 else -np.inf


@njit(cache=True)
def newton_next(tau, count, s1, s2):
    """The next iterate of the threshold search from ``tau``, where
    ``S = {v > tau}`` has ``count`` members with sums ``s1``, ``s2``.

    Newton's step on ``f(tau) - 1`` over S (``f' = -2 sum (v - tau)``) is a
    lower bound on the threshold like ``tau``; so is ``mean_S - 1 /
    sqrt(|S|)``, by Cauchy-Schwarz (``f(tau) >= |S| (mean_S - tau)^2``).
    Takes the larger."""
    inv = 1.0 / count
    f = s2 - 2.0 * tau * s1 + count * tau * tau
    slope = s1 - count * tau
    newton = tau + (f - 1.0) / (2.0 * slope)
    bound = s1 * inv - math.sqrt(inv)
    return bound if bound > newton else newton


@njit(cache=True)
def _sorted_threshold(g, m):
    """The sort-based threshold over the candidates ``g[:m]`` (``g = -v``):
    sorts them (by insertion when short) and walks them (:func:`sorted_walk`)."""
    if m <= _INSERTION_SORT_MAX:
        insertion_sort(g, m)
    else:
        g[:m].sort()
    return sorted_walk(g, m)


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def _newton_threshold(v):
    """The threshold without sorting, when it can be certified.

    ``v`` holds a row's shifted half-logits (``max v = 0``). Newton's method
    on the convex, decreasing ``f(tau) = sum [v - tau]_+^2`` from ``tau = -1``
    (where ``f >= 1``) rises monotonically to the root, so every iterate's
    set ``S = {v > tau}`` contains the support. At each iterate the
    sort-based formula is evaluated on S, ``tau_S = mean_S - sqrt(delta_S)``;
    if no member of S is below ``tau_S`` then S is the support and ``tau_S``
    is exactly the threshold the sorted walk returns (``tau_{rho*}`` with
    ``rho* = |S|``). That check is counted during the next step's pass, so
    that every pass is one branch-free, vectorized loop over the row of sums
    and counts (entries below -1 never enter S). Returns ``(tau,
    certified)``.
    """
    k = v.shape[0]
    tau = -1.0
    # the previous iterate and its tau_S, checked in the next pass
    lo = np.inf
    hi = -np.inf
    stalled = False
    for _ in range(_NEWTON_STEPS + 1):
        count = 0.0
        s1 = 0.0
        s2 = 0.0
        below = 0.0
        for j in range(k):
            x = v[j]
            inside = x > tau
            y = x if inside else 0.0
            count += 1.0 if inside else 0.0
            s1 += y
            s2 += y * y
            below += 1.0 if (x > lo and x < hi) else 0.0
        if below == 0.0 and hi > -np.inf:
            return hi, True
        if stalled:
            break
        lo = tau
        hi = set_threshold(count, s1, s2)
        new = newton_next(tau, count, s1, s2)
        # Stalled: one more pass at the same tau only checks this tau_S.
        stalled = not new > tau
        tau = tau if stalled else new
    return lo, False


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def entmax15_block(E, m, emin, sigma, R, F, work):
    """Entmax15(-(emin + E) / sigma) of the first ``m`` rows of the block of
    energy gaps ``E`` (``>= 0``) into ``R``, and each row's free energy
    ``emin + sum_k r_k E_k - sigma * (4/3) * (1 - sum_k r_k^{3/2})`` into
    ``F``.

    ``E``, ``R`` and ``work`` are float64 ``(rows, k)`` arrays; ``emin``
    holds the rows' minima. Per row: the half-logits ``v = -E / (2 sigma)`` in
    one pass, the certified Newton threshold (:func:`_newton_threshold`),
    the sorted walk over the candidates only when Newton cannot certify, and
    the responsibilities and energies in one more pass; all but the rare
    fallback are branch-free loops over the row.
    """
    k = E.shape[1]
    for s in range(m):
        e = E[s]
        v = work[s]
        for j in range(k):
            v[j] = -half_gap(e[j], 0.0, sigma)
        tau, certified = _newton_threshold(v)
        if not certified:
            g = R[s]  # candidates g = -v <= 1, sorted in place
            c = 0
            for j in range(k):
                if v[j] >= -1.0:
                    g[c] = -v[j]
                    c += 1
            tau = _sorted_threshold(g, c)
        energy = 0.0
        power = 0.0  # sum r^{3/2}
        r = R[s]
        for j in range(k):
            q = v[j] - tau
            rj = q * q if q > 0.0 else 0.0
            r[j] = rj
            energy += rj * e[j]
            power += rj * (q if q > 0.0 else 0.0)
        F[s] = emin[s] + energy - sigma * (4.0 / 3.0) * (1.0 - power)


@njit(cache=True, parallel=True, fastmath={"reassoc", "contract", "nsz"})
def entmax15_backward(R, G):
    """Vector-Jacobian product of entmax15 with ``q = sqrt(r)``:
    ``g_z = q * g - q * sum(q * g) / sum(q)`` row-wise, zero off the support
    (rows in parallel, each row's loops vectorized). A row whose ``g - mean``
    overflows (finite but huge gradients) is computed again on ``g / 4`` and
    scaled back, so only a result beyond the dtype's range is infinite."""
    n, k = R.shape
    out = np.empty_like(R)
    for i in prange(n):
        scale = 1.0
        for _ in range(2):
            qg = 0.0
            qs = 0.0
            for j in range(k):
                q = math.sqrt(np.float64(R[i, j]))
                qg += q * (G[i, j] * scale)
                qs += q
            mean = qg / qs
            overflow = 0
            for j in range(k):
                v = math.sqrt(np.float64(R[i, j])) * (G[i, j] * scale - mean)
                overflow += abs(v) == np.inf
                out[i, j] = v / scale
            if overflow == 0:
                break
            scale = 0.25
    return out
