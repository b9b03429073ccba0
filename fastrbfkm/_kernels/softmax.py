"""Log-sum-exp-stable softmax over one row of energies, and its backward.

A row is given as energies ``e`` (squared distances, or ``-Z`` for logits) at
temperature ``sigma``: the logits are ``z = -e / sigma``. Shifting by the
row's minimum energy makes every exponent ``<= 0``, so nothing overflows and
the winner always contributes exactly 1 to the normalizer: no NaN for any
finite ``sigma > 0``.
"""

import math

import numpy as np
from numba import njit, prange

#: exp(-x) is exactly 0.0 in float64 beyond this; skip the call.
EXP_UNDERFLOW = 746.0

# exp(-a) = 2^q exp(r), q = round(-a / ln 2), |r| <= ln(2) / 2: Cody and
# Waite's two-part ln 2, and the Taylor polynomial of degree 12 (truncation
# below 2e-16 relative on that interval).
_LOG2E = 1.4426950408889634
_LN2_HI = 0.693147180369123816490
_LN2_LO = 1.90821492927058770002e-10
_SHIFTER = 6755399441055744.0  # 1.5 * 2^52: adding it rounds to an integer
_SHIFTER_BITS = np.int64(0x4338000000000000)  # its bit pattern
_BIAS = 54  # 2^q is built as 2^(q + 54) * 2^-54, so q down to -1076 stays normal
_UNBIAS = 2.0**-54


@njit(cache=True, fastmath={"contract"})
def neg_exp(gap, scale, out, work):
    """``out[j] = exp(-a)`` with ``a = gap[j] * scale`` for ``gap[j] >= 0``
    (``a = 0`` for a zero gap, even when ``scale`` overflowed): exactly 0
    once ``a`` reaches ``EXP_UNDERFLOW``, else within 2 ulp of the C
    library's ``exp`` of the rounded ``a``.

    Written so that the compiler vectorizes it (libm's ``exp`` is one scalar
    call per entry): range reduction and a polynomial in one loop, the power
    of two assembled from the bits of the rounded exponent in a second (in
    ``work``, float64 of the same length), the product in a third. ``out``
    and ``work`` must not overlap ``gap`` or each other. A whole block of rows
    is one call (flattened), so short rows cost no per-row loop set-up.
    """
    m = gap.shape[0]
    for j in range(m):
        g = gap[j]
        a = g * scale if g > 0.0 else 0.0
        x = -min(a, EXP_UNDERFLOW)
        t = x * _LOG2E + _SHIFTER
        q = t - _SHIFTER
        r = x - q * _LN2_HI - q * _LN2_LO
        p = 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        out[j] = p if a < EXP_UNDERFLOW else 0.0
        work[j] = t
    bits = work.view(np.int64)
    for j in range(m):
        bits[j] = (bits[j] - _SHIFTER_BITS + _BIAS + 1023) << 52
    for j in range(m):
        out[j] = out[j] * work[j] * _UNBIAS


@njit(cache=True, fastmath={"reassoc", "contract", "nsz"})
def softmax_block(E, m, emin, sigma, R, F, work):
    """Softmax(-(emin + E) / sigma) of the first ``m`` rows of the block of
    energy gaps ``E`` (``>= 0``) into ``R``, and each row's free energy
    ``emin - sigma * log(sum_k exp(-E_k / sigma))`` into ``F``.

    ``E``, ``R`` and ``work`` are C-contiguous float64 ``(rows, k)`` arrays;
    ``emin`` holds the rows' minima. The exponentials of all ``m * k``
    entries are one vector call, and every loop here is vectorized (the row
    sums in SIMD lanes).
    """
    k = E.shape[1]
    size = m * k
    neg_exp(E.ravel()[:size], 1.0 / sigma, R.ravel()[:size], work.ravel()[:size])
    for r in range(m):
        total = 0.0
        for j in range(k):
            total += R[r, j]
        inv = 1.0 / total
        for j in range(k):
            R[r, j] *= inv
        F[r] = emin[r] - sigma * math.log(total)


@njit(cache=True, parallel=True, fastmath={"reassoc", "contract", "nsz"})
def softmax_backward(R, G):
    """Vector-Jacobian product of softmax: ``g_z = r * (g - sum(r * g))``
    row-wise (rows in parallel, each row's loops vectorized). A row whose
    ``g - sum(r * g)`` overflows (finite but huge gradients) is computed
    again on ``g / 4`` and scaled back, so only a result beyond the dtype's
    range is infinite."""
    n, k = R.shape
    out = np.empty_like(R)
    for i in prange(n):
        scale = 1.0
        for _ in range(2):
            dot = 0.0
            for j in range(k):
                dot += np.float64(R[i, j]) * (G[i, j] * scale)
            overflow = 0
            for j in range(k):
                v = R[i, j] * (G[i, j] * scale - dot)
                overflow += abs(v) == np.inf
                out[i, j] = v / scale
            if overflow == 0:
                break
            scale = 0.25
    return out
