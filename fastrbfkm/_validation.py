"""Input validation at the public boundary.

Every public function validates its arguments once, here, and hands the
kernels C-contiguous float32/float64 arrays they can trust. Messages name the
argument and say what was expected.
"""

from __future__ import annotations

import numpy as np

from ._kernels import CSR
from ._model import ASSIGNMENTS


def float_dtype(array: np.ndarray, name: str) -> np.dtype:
    """The float dtype an array is computed in: float32 stays float32, float16
    becomes float32, integers and booleans become float64."""
    dtype = array.dtype
    if dtype.kind == "c":
        raise TypeError(f"{name} must be real-valued; got complex dtype {dtype}.")
    if dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric; got dtype {dtype}.")
    if dtype == np.float32 or dtype == np.float16:
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def refuse_tensor_with_grad(array, name: str) -> None:
    """A torch tensor that requires grad cannot be read as numpy without
    detaching it: say so, naming the argument (torch is not imported here)."""
    if type(array).__module__.split(".")[0] == "torch" and getattr(array, "requires_grad", False):
        raise TypeError(
            f"{name} is a torch tensor that requires grad; pass {name}.detach() (this API "
            "takes no gradient: fastrbfkm.torch is the differentiable layer)."
        )


def as_float_array(
    array,
    name: str,
    *,
    ndim: int | tuple[int, ...] = 2,
    dtype: np.dtype | None = None,
    coordinates: bool = False,
    fitting: bool = False,
) -> np.ndarray:
    """Return ``array`` as a C-contiguous float32/float64 array of ``ndim``
    dimensions, non-empty along every axis and free of NaN and inf.

    With ``coordinates=True`` the rows are points whose squared distances
    (formed around the centers' mean, so from coordinates up to twice the
    largest magnitude) must be representable in the dtype; with ``fitting``
    too they are data to learn centers from, whose squares must not
    underflow (:func:`check_value_range`).
    """
    refuse_tensor_with_grad(array, name)
    if is_sparse(array):
        raise TypeError(
            f"{name} is a scipy.sparse {type(array).__name__}; only the data X may be "
            f"sparse: pass {name}.toarray()."
        )
    try:
        array = np.asarray(array)
    except (TypeError, ValueError) as exc:  # ragged nested lists and the like
        raise TypeError(f"{name} must be an array of numbers: {exc}") from None
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if array.ndim not in dims:
        expected = " or ".join(f"{d}-D" for d in dims)
        raise ValueError(
            f"{name} must be a {expected} array; got {array.ndim}-D with shape {array.shape}."
        )
    target = float_dtype(array, name)  # checks the kind even when dtype is given
    if dtype is not None:
        target = np.dtype(dtype)
    if array.shape[0] == 0:
        raise ValueError(f"{name} must have at least one row; got shape {array.shape}.")
    if array.ndim == 2 and array.shape[1] == 0:
        raise ValueError(f"{name} must have at least one column; got shape {array.shape}.")
    array = np.ascontiguousarray(array, dtype=target)
    lo, hi = float(array.min()), float(array.max())
    check_value_range(lo, hi, name, target, array, coordinates, fitting)
    return array


def is_sparse(array) -> bool:
    """Whether ``array`` is a scipy.sparse matrix or array (without importing scipy)."""
    return type(array).__module__.startswith("scipy.sparse")


def as_csr(
    matrix,
    name: str,
    *,
    dtype: np.dtype | None = None,
    fitting: bool = False,
    coordinates: bool = True,
) -> CSR:
    """A scipy.sparse matrix or array of coordinates as a canonical
    :class:`~fastrbfkm._kernels.CSR`, never densified.

    Other formats are converted to CSR (as scikit-learn does). float32
    stays float32, other dtypes become float64 (or ``dtype``). Duplicate
    entries are summed and the column indices sorted, in a copy (scipy's
    meaning of duplicates); a matrix whose index arrays are inconsistent is
    refused. The stored values are checked as :func:`as_float_array` checks
    an array's (finite; with ``coordinates``, magnitudes usable for squared
    distances).
    """
    from scipy import sparse

    if len(matrix.shape) != 2:
        raise ValueError(
            f"{name} must be a 2-D sparse matrix; got {len(matrix.shape)}-D with shape "
            f"{matrix.shape}."
        )
    n, d = matrix.shape
    if n == 0:
        raise ValueError(f"{name} must have at least one row; got shape {matrix.shape}.")
    if d == 0:
        raise ValueError(f"{name} must have at least one column; got shape {matrix.shape}.")
    if d > np.iinfo(np.int32).max:
        raise ValueError(f"{name} has {d} columns; at most {np.iinfo(np.int32).max} are supported.")
    target = float_dtype(matrix, name) if dtype is None else np.dtype(dtype)
    csr = sparse.csr_matrix(matrix)  # shares a CSR's arrays; converts other formats
    try:
        csr.check_format(full_check=True)
    except ValueError as exc:
        raise ValueError(f"{name} is not a valid sparse matrix: {exc}") from None
    if not csr.has_canonical_format:
        csr = csr.copy()
        csr.sum_duplicates()  # sorts the indices too
    data = np.ascontiguousarray(csr.data, dtype=target)
    lo = float(data.min()) if data.size else 0.0
    hi = float(data.max()) if data.size else 0.0
    if data.size < n * d:  # implicit zeros
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    check_value_range(lo, hi, name, target, csr, coordinates=coordinates, fitting=fitting)
    return CSR(
        data,
        np.ascontiguousarray(csr.indices, dtype=np.int32),
        np.ascontiguousarray(csr.indptr, dtype=np.int64),
        int(d),
    )


def smallest_magnitude(dtype: np.dtype) -> float:
    """The smallest largest magnitude of data a fit learns from: below it the
    squares of the coordinates are subnormal in ``dtype`` (or zero), so that
    every squared distance is lost and every point looks like every other."""
    return float(np.sqrt(np.finfo(dtype).tiny))


def check_value_range(
    lo: float,
    hi: float,
    name: str,
    dtype: np.dtype,
    array,
    coordinates: bool,
    fitting: bool = False,
) -> None:
    """Raise unless the smallest and largest values ``lo`` and ``hi`` of
    ``array`` (anything with a shape: a block, a lazy array) are finite and,
    for coordinates, small enough for squared distances in ``dtype``; with
    ``fitting`` (data a fit learns from), unless zero, large enough for them
    (:func:`smallest_magnitude`)."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if coordinates:
        limit = np.sqrt(np.finfo(dtype).max / (16.0 * array.shape[1]))
        magnitude = max(-lo, hi)
        if magnitude >= limit:
            raise ValueError(
                f"{name} has values up to {magnitude:.3g}: squared distances would overflow "
                f"{dtype}; rescale the data (the largest usable magnitude is {limit:.3g})."
            )
        smallest = smallest_magnitude(dtype)
        if fitting and 0.0 < magnitude < smallest:
            factor = -int(np.floor(np.log2(magnitude)))  # to a largest magnitude in [1, 2)
            raise ValueError(
                f"{name} has values only up to {magnitude:.3g}: their squares underflow "
                f"{dtype}, so every squared distance would be lost; rescale the data, e.g. "
                f"multiply it by 2.0**{factor} (exact for a power of two; the smallest "
                f"usable magnitude is {smallest:.3g})."
            )


def check_centers(C, X, name: str = "C") -> np.ndarray:
    """Centers ``(k, d)`` in the dtype of checked data X, with X's number of
    columns (X only needs ``dtype`` and ``shape``: it may be a lazy array)."""
    C = as_float_array(C, name, dtype=X.dtype, coordinates=True)
    if C.shape[1] != X.shape[1]:
        raise ValueError(
            f"{name} must have as many columns as X: X has {X.shape[1]} features, "
            f"{name} has {C.shape[1]}."
        )
    return C


def check_real(value, name: str) -> float:
    """A real scalar (Python or NumPy number, or 0-d array; not bool or str)."""
    refuse_tensor_with_grad(value, name)
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    if arr is None or arr.ndim != 0 or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real number; got {type(value).__name__}.")
    return float(arr)


def check_sigma(sigma) -> float:
    """``sigma`` must be a real number, finite and >= 0 (0 is the hard limit)."""
    sigma = check_real(sigma, "sigma")
    if not np.isfinite(sigma) or sigma < 0:
        raise ValueError(f"sigma must be finite and >= 0 (0 is the hard limit); got {sigma!r}.")
    return sigma


def check_assignment(assignment) -> int:
    """Kernel code of ``assignment``, one of the names registered in
    :data:`fastrbfkm._model.ASSIGNMENTS`."""
    if not isinstance(assignment, str) or assignment not in ASSIGNMENTS:
        raise ValueError(f"assignment must be one of {sorted(ASSIGNMENTS)}; got {assignment!r}.")
    return ASSIGNMENTS[assignment].code


def check_soft_assignment(assignment) -> int:
    """Kernel code of a soft ``assignment``, a registered one with a
    temperature ('softmax', 'entmax15': what critical temperatures,
    annealing and phase diagrams take)."""
    mode = check_assignment(assignment)
    if not ASSIGNMENTS[assignment].soft:
        soft = " or ".join(repr(name) for name, a in ASSIGNMENTS.items() if a.soft)
        raise ValueError(f"assignment must be {soft}: {assignment} has no temperature.")
    return mode


def check_count(value, name: str, minimum: int = 1) -> int:
    """``value`` as an int of at least ``minimum`` (a number of clusters):
    a TypeError for anything but an integer (booleans included), a
    ValueError below ``minimum``."""
    expected = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be {expected}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be {expected}; got {value}.")
    return int(value)


def check_sample_weight(sample_weight, n: int) -> np.ndarray:
    """Float64 weights of length ``n``, or an empty array for unit weights."""
    if sample_weight is None:
        return np.empty(0)
    w = as_float_array(sample_weight, "sample_weight", ndim=1, dtype=np.dtype(np.float64))
    if w.shape[0] != n:
        raise ValueError(f"sample_weight must have one entry per row of X ({n}); got {w.shape[0]}.")
    check_weight_range(float(w.min()), float(w.sum()))
    return w


def check_weight_range(lowest: float, total: float) -> None:
    """Raise unless finite weights are non-negative with a positive sum."""
    if lowest < 0:
        raise ValueError("sample_weight must be non-negative.")
    if not total > 0:
        raise ValueError("sample_weight must have a positive sum; the weights are all zero.")
    if not np.isfinite(total):
        raise ValueError(
            "sample_weight sums to more than the largest float64 (the weighted sums would "
            "overflow); divide the weights by a common factor, which changes nothing else."
        )
    smallest = np.finfo(np.float64).tiny / np.finfo(np.float64).eps
    if total < smallest:
        raise ValueError(
            f"sample_weight sums to only {total:.3g}: the weighted sums would be subnormal "
            f"and lose their precision; multiply the weights by a common factor (the "
            f"smallest usable sum is {smallest:.3g}), which changes nothing but the scale "
            "of weighted totals."
        )


def check_lr(lr) -> float | None:
    """``lr`` is None (the Lloyd rate 1 / (2 N_k)) or a finite number > 0."""
    if lr is None:
        return None
    lr = check_real(lr, "lr")
    if not np.isfinite(lr) or lr <= 0:
        raise ValueError(f"lr must be None or a finite number > 0; got {lr!r}.")
    return lr


#: The largest integer parameter a fit takes (counts and iterations go to
#: the kernels as int64).
LARGEST_INTEGER = int(np.iinfo(np.int64).max)


def check_integer_params(estimator) -> None:
    """The integer parameters of a scikit-learn style ``estimator`` (those
    whose declared constraints admit integers): not booleans (``True`` is an
    int in Python, never a count a user means; scikit-learn's KMeans refuses
    it too), and at most :data:`LARGEST_INTEGER`. Run after the declared
    constraints are checked."""
    import numbers

    from sklearn.utils._param_validation import Interval

    for name, constraints in estimator._parameter_constraints.items():
        integral = any(isinstance(c, Interval) and c.type is numbers.Integral for c in constraints)
        value = getattr(estimator, name)
        if not integral or not isinstance(value, (bool, np.bool_, numbers.Integral)):
            continue
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name} must be an integer, not a boolean; got {value!r}.")
        if value > LARGEST_INTEGER:
            raise ValueError(f"{name} must be at most {LARGEST_INTEGER} (int64); got {value!r}.")


def check_generator(random_state, name: str = "random_state") -> np.random.Generator:
    """``numpy.random.default_rng(random_state)`` (None, an int >= 0, a
    sequence of them, a SeedSequence, BitGenerator or Generator), with a
    TypeError or ValueError that names the argument when it is none of those."""
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"{name} must be None, an int or a numpy Generator; got {random_state!r}.")
    try:
        return np.random.default_rng(random_state)
    except TypeError as error:
        raise TypeError(
            f"{name} must be None, an int or a numpy Generator; got "
            f"{type(random_state).__name__} ({error})."
        ) from None
    except ValueError as error:
        raise ValueError(
            f"{name} must be a non-negative int seed; got {random_state!r} ({error})."
        ) from None
