"""Slow, obviously correct references for every kernel, in float64 numpy.

Each follows the definition in docs/conventions.md as literally as possible,
and where the kernel uses a clever algorithm the reference uses a different,
simple one (entmax15: bisection on the threshold instead of sorting).
"""

import numpy as np


def sqdist(X, C):
    X = np.asarray(X, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    return ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)


def softmax(Z):
    Z = np.asarray(Z, dtype=np.float64)
    E = np.exp(Z - Z.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def entmax15(Z, iters=200):
    """Bisection on tau: sum_k [z_k / 2 - tau]_+^2 = 1, tau in [max/2 - 1, max/2]."""
    Z = np.asarray(Z, dtype=np.float64)
    half = Z / 2
    hi = half.max(axis=-1, keepdims=True)
    lo = hi - 1.0
    for _ in range(iters):
        mid = (lo + hi) / 2
        total = (np.clip(half - mid, 0, None) ** 2).sum(axis=-1, keepdims=True)
        big = total > 1
        lo = np.where(big, mid, lo)
        hi = np.where(big, hi, mid)
    tau = (lo + hi) / 2
    return np.clip(half - tau, 0, None) ** 2


def hard(D):
    R = np.zeros_like(np.asarray(D, dtype=np.float64))
    R[np.arange(len(R)), np.argmin(D, axis=1)] = 1.0
    return R


def responsibilities(X, C, sigma, assignment):
    D = sqdist(X, C)
    if assignment == "hard" or sigma == 0:
        return hard(D)
    if assignment == "softmax":
        return softmax(-D / sigma)
    return entmax15(-D / sigma)


def entropy(R, assignment):
    if assignment == "softmax":
        with np.errstate(divide="ignore", invalid="ignore"):
            return -np.where(R > 0, R * np.log(R), 0.0).sum(axis=1)
    if assignment == "entmax15":
        return (4.0 / 3.0) * (1.0 - (R**1.5).sum(axis=1))
    return np.zeros(len(R))


def h_max(assignment, k):
    if assignment == "softmax":
        return np.log(k)
    if assignment == "entmax15":
        return (4.0 / 3.0) * (1.0 - k**-0.5)
    return 0.0


def weights(w, n):
    return np.ones(n) if w is None else np.asarray(w, dtype=np.float64)


def objective(X, C, sigma, assignment, w=None):
    D = sqdist(X, C)
    R = responsibilities(X, C, sigma, assignment)
    H = entropy(R, assignment) if sigma > 0 else 0.0
    return float(weights(w, len(D)) @ ((R * D).sum(axis=1) - sigma * H))


def own_sqdists(X, C, labels):
    """Each row's squared distance to its own center ``C[labels]``, float64."""
    diff = np.asarray(X, dtype=np.float64) - np.asarray(C, dtype=np.float64)[labels]
    return (diff * diff).sum(axis=1)


def inertia(X, C, w=None):
    return float(weights(w, len(X)) @ sqdist(X, C).min(axis=1))


def stats(X, C, sigma, assignment, w=None):
    R = responsibilities(X, C, sigma, assignment) * weights(w, len(X))[:, None]
    return R.sum(axis=0), R.T @ np.asarray(X, dtype=np.float64)


def gradient(X, C, sigma, assignment, w=None):
    N, S = stats(X, C, sigma, assignment, w)
    return 2.0 * (N[:, None] * np.asarray(C, dtype=np.float64) - S)


def lloyd(X, C, w=None):
    """One Lloyd iteration: every center to the weighted mean of its Voronoi cell."""
    X = np.asarray(X, dtype=np.float64)
    w = weights(w, len(X))
    labels = sqdist(X, C).argmin(axis=1)
    new = np.array(C, dtype=np.float64)
    for j in range(len(new)):
        cell = labels == j
        if w[cell].sum() > 0:
            new[j] = (w[cell, None] * X[cell]).sum(axis=0) / w[cell].sum()
    return new


def softmax_backward(R, G):
    """J^T g with the explicit Jacobian dr/dz = diag(r) - r r^T."""
    out = np.empty_like(np.asarray(R, dtype=np.float64))
    for i, (r, g) in enumerate(zip(np.asarray(R, float), np.asarray(G, float), strict=True)):
        J = np.diag(r) - np.outer(r, r)
        out[i] = J.T @ g
    return out


def entmax15_backward(R, G):
    """J^T g with the explicit Jacobian dr/dz = diag(q) - q q^T / sum(q), q = sqrt(r)."""
    out = np.empty_like(np.asarray(R, dtype=np.float64))
    for i, (r, g) in enumerate(zip(np.asarray(R, float), np.asarray(G, float), strict=True)):
        q = np.sqrt(r)
        J = np.diag(q) - np.outer(q, q) / q.sum()
        out[i] = J.T @ g
    return out


def removal_costs(X, C, w=None):
    """Per center: sum over its cell of w * (second-nearest - nearest distance)."""
    D = sqdist(X, C)
    w = weights(w, len(D))
    costs = np.zeros(len(C))
    if len(C) > 1:
        order = np.sort(D, axis=1)
        np.add.at(costs, D.argmin(axis=1), w * (order[:, 1] - order[:, 0]))
    return costs


def cell_summary(X, C, w=None):
    """Per center: removal cost, its cell's inertia and weight, and its
    cell's scatter sum w (x - c_j)(x - c_j)^T (nearest center, ties to the lowest)."""
    X = np.asarray(X, dtype=np.float64)
    D = sqdist(X, C)
    w = weights(w, len(D))
    labels = D.argmin(axis=1)
    k, d = C.shape
    cells = np.zeros(k)
    mass = np.zeros(k)
    np.add.at(cells, labels, w * D[np.arange(len(D)), labels])
    np.add.at(mass, labels, w)
    A = np.zeros((k, d, d))
    for j in range(k):
        diff = X[labels == j] - np.asarray(C[j], dtype=np.float64)
        A[j] = (w[labels == j][:, None] * diff).T @ diff
    return removal_costs(X, C, w), cells, mass, A


def center_scatter(X, C, sigma, assignment, chosen, w=None):
    """N_j = sum w r_ij and A_j = sum w psi(r_ij) (x - c_j)(x - c_j)^T for chosen j."""
    X = np.asarray(X, dtype=np.float64)
    R = responsibilities(X, C, sigma, assignment)
    w = weights(w, len(X))
    psi = R if assignment == "softmax" else np.sqrt(R)
    N = np.array([w @ R[:, j] for j in chosen])
    A = np.array([((w * psi[:, j])[:, None] * (X - C[j])).T @ (X - C[j]) for j in chosen])
    return N, A


def scatter_apply(X, C, sigma, assignment, chosen, hard, V, w=None):
    """N_j as in center_scatter and U_g = A_j V[g] for j = chosen[g] (hard
    responsibilities where hard[g]), A_j never formed."""
    X = np.asarray(X, dtype=np.float64)
    R = responsibilities(X, C, sigma, assignment)
    H = responsibilities(X, C, 0.0, "hard")
    w = weights(w, len(X))
    N, U = [], []
    for j, h, v in zip(chosen, hard, V, strict=True):
        r = H[:, j] if h else R[:, j]
        psi = r if assignment == "softmax" and not h else np.sqrt(r)
        N.append(w @ r)
        U.append((w * psi * ((X - C[j]) @ v)) @ (X - C[j]))
    return np.array(N), np.array(U).reshape(len(chosen), X.shape[1])


def kmeans_plusplus(X, w, k, uniforms):
    """Greedy k-means++ driven by the given U[0, 1) draws (see the kernel)."""
    X = np.asarray(X, dtype=np.float64)
    w = weights(w, len(X))

    def pick(cumulative, value):
        return min(np.searchsorted(cumulative, value, side="right"), len(cumulative) - 1)

    seeds = [pick(np.cumsum(w), uniforms[0, 0] * w.sum())]
    closest = ((X - X[seeds[0]]) ** 2).sum(axis=1)
    for c in range(1, k):
        cumulative = np.cumsum(w * closest)
        candidates = [pick(cumulative, u * cumulative[-1]) for u in uniforms[c]]
        options = [np.minimum(closest, ((X - X[j]) ** 2).sum(axis=1)) for j in candidates]
        best = int(np.argmin([w @ o for o in options]))
        seeds.append(candidates[best])
        closest = options[best]
    return np.array(seeds)


def transfer_sweeps(X, w, labels, k, max_sweeps):
    """Hartigan's single-point transfers, sweeping the rows in order: a row
    moves to the cluster whose weighted inertia after the move (both means
    recomputed from scratch) is lowest, when that is lower than now."""
    X = np.asarray(X, dtype=np.float64)
    w = weights(w, len(X))
    labels = np.array(labels, dtype=np.int64)

    def cost(members):  # weighted inertia of one cluster around its own mean
        if w[members].sum() <= 0:
            return 0.0
        mean = (w[members, None] * X[members]).sum(axis=0) / w[members].sum()
        return float((w[members] * ((X[members] - mean) ** 2).sum(axis=1)).sum())

    sweeps = 0
    while sweeps < max_sweeps:
        sweeps += 1
        moved = 0
        for i in range(len(X)):
            a = labels[i]
            mass = np.array([w[labels == j].sum() for j in range(k)])
            if w[i] <= 0 or mass[a] - w[i] <= 0:
                continue
            here = labels == a
            without = here.copy()
            without[i] = False
            gain = cost(here) - cost(without)
            best, best_cost = -1, gain * (1 - 1e-12)
            for b in range(k):
                if b == a or mass[b] <= 0:
                    continue
                there = labels == b
                joined = there.copy()
                joined[i] = True
                if cost(joined) - cost(there) < best_cost:
                    best, best_cost = b, cost(joined) - cost(there)
            if best >= 0:
                labels[i] = best
                moved += 1
        if moved == 0:
            break
    centers = np.zeros((k, X.shape[1]))
    for j in range(k):
        if w[labels == j].sum() > 0:
            centers[j] = (w[labels == j, None] * X[labels == j]).sum(axis=0) / w[labels == j].sum()
    return centers, labels, sweeps


def distinct_clusters(C, sigma):
    """Groups of centers joined by chains of pairs at most sqrt(2 sigma) apart."""
    C = np.asarray(C, dtype=np.float64)
    k = len(C)
    group = list(range(k))

    def root(i):
        while group[i] != i:
            i = group[i]
        return i

    for i in range(k):
        for j in range(i + 1, k):
            if np.sqrt(((C[i] - C[j]) ** 2).sum()) <= np.sqrt(2.0 * sigma):
                group[root(i)] = root(j)
    return len({root(i) for i in range(k)})


# The sphere (metric="cosine"): unit rows and unit centers, then the
# Euclidean definitions above; D = ||x - c||^2 = 2 - 2 x.c.


def unit(X):
    X = np.asarray(X, dtype=np.float64)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def cosine_distances(X, C):
    """``1 - x.c / (||x|| ||c||)``: half the squared distance on the sphere."""
    return 1.0 - unit(X) @ unit(C).T


def spherical_step(X, C, sigma, assignment, w=None):
    """The weighted means of the responsibilities of unit rows at unit
    centers, scaled to unit length (a center of zero mass stays)."""
    U, C = unit(X), unit(C)
    N, S = stats(U, C, sigma, assignment, w)
    new = C.copy()
    new[N > 0] = unit(S[N > 0])
    return new


def spherical_critical(X, assignment, k, w=None):
    """``2 lambda_T / ||m||`` (times sqrt(k) for entmax15): lambda_T the
    largest eigenvalue of the weighted covariance of the unit rows
    projected onto the tangent space at the mean's direction."""
    U = unit(X)
    w = weights(w, len(U))
    m = w @ U / w.sum()
    c = m / np.linalg.norm(m)
    cov = ((U - m) * w[:, None]).T @ (U - m) / w.sum()
    P = np.eye(len(c)) - np.outer(c, c)
    lam = np.linalg.eigvalsh(P @ cov @ P)[-1]
    factor = np.sqrt(k) if assignment == "entmax15" else 1.0
    return 2.0 * factor * lam / np.linalg.norm(m)


def nearest_centers(C, q):
    """Each center's index, then its q nearest other centers (nearest
    first, ties to the lowest index)."""
    D = sqdist(C, C)
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1, kind="stable")[:, :q]
    return np.concatenate([np.arange(len(C))[:, None], order], axis=1)


def kmeans_parallel_rows(X, w, k, start, rng, rounds, oversampling):
    """k-means|| rounds from the centers ``start``, then greedy weighted
    k-means++ on every candidate (weighted by the mass of the rows nearest
    to it, ties to the lowest index), all distances from differences, the
    random draws taken from ``rng`` in the order of
    :func:`fastrbfkm.seeding.kmeans_parallel_rows`."""
    X = np.asarray(X, dtype=np.float64)
    w = weights(w, len(X))
    C = np.asarray(start, dtype=np.float64)

    def distances(C):
        return ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)

    for _ in range(rounds):
        mass = w * distances(C).min(axis=1)
        phi = mass.sum()
        if not phi > 0:
            break
        pick = np.flatnonzero(rng.random(len(X)) < oversampling * k / phi * mass)
        C = np.concatenate([C, X[pick]])
    masses = np.bincount(distances(C).argmin(axis=1), w, minlength=len(C))
    uniforms = rng.random((k, 2 + int(np.log(k))))
    return C[kmeans_plusplus(C, masses, k, uniforms)]
