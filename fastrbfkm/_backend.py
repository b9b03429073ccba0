"""The one door: every public entry point turns its data into a rows source
here (and logits, which are not data, into their row-wise assignment:
:func:`assign_logits`).

:func:`open_rows` takes ``(X, sample_weight, backend)``, validates them and
returns the :class:`~fastrbfkm._rows.Rows` that holds X:

- a CUDA array (CuPy, a PyTorch CUDA tensor, a numba device array):
  ``DeviceRows`` over it, in place (:mod:`fastrbfkm.cuda.rows`);
- a ``dask.array.Array``: ``DaskRows`` over its row chunks (:mod:`fastrbfkm.dask`);
- a ``scipy.sparse`` matrix or array: :class:`~fastrbfkm._rows.SparseRows`
  over its canonical CSR form, on the CPU;
- for a fit, a ``numpy.memmap`` larger than the working memory:
  :class:`~fastrbfkm._streaming.StreamedRows`, read from the file block by block;
- anything else: a validated numpy array, in
  :class:`~fastrbfkm._rows.InMemoryRows`, or copied once to the GPU when the
  backend sends the work there.

Where the work runs, ``backend``:

- ``"cpu"``: the numba CPU kernels. CUDA arrays are refused (no silent copy
  to the host).
- ``"cuda"``: the numba.cuda kernels of :mod:`fastrbfkm.cuda`; a
  RuntimeError says what is missing when no GPU can be used (under
  ``NUMBA_ENABLE_CUDASIM=1`` they run on numba's CUDA simulator, for tests).
  Dask arrays are refused.
- ``"auto"``: the GPU for CUDA array input; for host data, the GPU only when
  a real one is available and one pass over the data costs at least
  :data:`AUTO_MIN_WORK` multiply-adds (``n * d * k``), enough for the
  work to outweigh copying X once; else the CPU. Smaller data never imports
  numba.cuda.

This module imports neither numba.cuda nor dask: ``fastrbfkm.cuda`` is
imported only when the GPU is asked for, or when numba.cuda is already
loaded and an input might be one of its device arrays; ``fastrbfkm.dask``
only when a dask array arrives (one cannot exist before ``dask.array`` is
imported).
"""

from __future__ import annotations

import functools
import numbers
import sys
from collections.abc import Iterator

import numpy as np
from sklearn.utils import check_array
from sklearn.utils.validation import validate_data

from . import _kernels as K
from ._model import Metric, metric_of
from ._rows import InMemoryRows, Rows, SparseRows
from ._streaming import StreamedRows, streams
from ._tunables import AUTO_MIN_WORK
from ._validation import (
    as_csr,
    as_float_array,
    check_sample_weight,
    is_sparse,
    refuse_tensor_with_grad,
)

BACKENDS = ("auto", "cpu", "cuda")


def check_backend(backend) -> str:
    """``backend`` must be one of ``"auto"``, ``"cpu"``, ``"cuda"``."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError(f"backend must be one of {list(BACKENDS)}; got {backend!r}.")
    return backend


def is_device_array(obj) -> bool:
    """Whether ``obj`` is a CUDA array (CUDA array interface, or a numba
    device array, the simulator's included)."""
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    if "numba.cuda" not in sys.modules:
        return False  # no numba device array can exist
    from .cuda.arrays import is_device_array as on_device

    return on_device(obj)


def is_dask_array(X) -> bool:
    """Whether X is a ``dask.array.Array`` (without importing dask)."""
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(X, module.Array)


@functools.cache
def gpu_available() -> bool:
    """Whether a real CUDA GPU is usable (imports numba.cuda; cached)."""
    try:
        from . import cuda
    except ImportError:
        return False
    return cuda.is_available()


def require_cuda() -> None:
    """Raise a RuntimeError saying why ``backend="cuda"`` cannot run, if it cannot."""
    try:
        from . import cuda
    except ImportError as exc:
        raise RuntimeError(
            f"backend='cuda' needs numba.cuda: pip install 'fastrbfkm[cuda]' ({exc})."
        ) from exc
    cuda.require()


def shape_of(array) -> tuple[int, ...]:
    """The shape of an array-like without converting it (``()`` if unknown)."""
    shape = getattr(array, "shape", None)
    if shape is not None:
        return tuple(int(s) for s in shape)
    try:
        return np.shape(array)
    except ValueError:  # ragged: validation will say so
        return ()


def choose(backend, X, work: int | None) -> str:
    """``"cpu"`` or ``"cuda"`` for data X and a pass of ``work`` multiply-adds
    (None: host data stays on the CPU under ``"auto"``)."""
    backend = check_backend(backend)
    device = is_device_array(X)
    if backend == "cpu":
        if device:
            raise ValueError(
                "X is a CUDA array but backend='cpu': use backend='cuda' or 'auto', "
                "or copy X to the host first."
            )
        return "cpu"
    if backend == "cuda":
        require_cuda()
        return "cuda"
    if device:
        return "cuda"
    if work is None or work < AUTO_MIN_WORK:
        return "cpu"
    return "cuda" if gpu_available() else "cpu"


def _n_centers(n_clusters, centers) -> int | None:
    """k for the ``n * d * k`` rule: ``n_clusters`` if it is a positive
    integer, else the rows of ``centers`` if it has a 2-D shape, else None."""
    if isinstance(n_clusters, numbers.Integral) and not isinstance(n_clusters, bool):
        return int(n_clusters) if n_clusters > 0 else None
    shape = shape_of(centers) if centers is not None else ()
    return shape[0] if len(shape) == 2 else None


def open_rows(
    X,
    sample_weight=None,
    backend: str = "auto",
    *,
    n_clusters: int | None = None,
    centers=None,
    fit: bool = False,
    estimator=None,
    metric: str = "euclidean",
) -> Rows:
    """The rows source for data X and its weights, on the chosen backend.

    Every public function and method that takes data calls this, and only
    this, to validate it and choose where its passes run.

    Parameters
    ----------
    X : array-like, numpy.memmap, dask.array.Array, scipy.sparse or CUDA array, shape (n, d)
        The data. float32 stays float32; other real dtypes become float64
        (CUDA arrays must already be float32 or float64).
    sample_weight : array-like of shape (n,), default=None
        Non-negative weights with a positive sum (a dask or CUDA array for
        such X); None means all ones.
    backend : {"auto", "cpu", "cuda"}, default="auto"
        Where the passes run (see the module's docstring).
    n_clusters : int, default=None
        Number of centers k, for the ``"auto"`` rule (``n * d * k``).
    centers : array-like of shape (k, d), default=None
        Centers (not validated here: see :meth:`Rows.check_centers`) whose
        number of rows is k, when ``n_clusters`` is not given.
    fit : bool, default=False
        The data of a fit, read in many passes: a memory-mapped file larger
        than the working memory is streamed from the file, and a dask
        array's chunks are persisted. Otherwise (new data, one pass) both
        stay as they are.
    estimator : estimator, default=None
        Validate numpy data as scikit-learn does for this estimator: with
        ``check_array`` for a fit, and against the fitted estimator
        (``validate_data(reset=False)``: feature names and count) for new
        data, whose other input kinds are checked for the feature count too.
        None: :func:`fastrbfkm._validation.as_float_array`.
    metric : {"euclidean", "cosine"}, default="euclidean"
        The name of an entry of :data:`fastrbfkm._model.METRICS`, kept as
        the source's ``metric``: the source holds X's rows through its
        projection for X's kind of input (``"cosine"``: scaled to unit
        length, a copy, a zero row refused; a streamed file's blocks as they
        are read). A metric the GPU does not take (``"cosine"``) refuses CUDA
        arrays and ``backend="cuda"``.

    Returns
    -------
    rows : Rows
        The source of X's rows: ``InMemoryRows``, ``StreamedRows``,
        ``DaskRows`` or ``DeviceRows``.
    """
    backend = check_backend(backend)
    metric = metric_of(metric)
    if not metric.cuda and backend == "cuda":
        raise ValueError(
            f"metric={metric.name!r} runs on the CPU only yet: use backend='cpu' or 'auto'."
        )
    rows = _open(X, sample_weight, backend, n_clusters, centers, fit, estimator, metric)
    rows.metric = metric
    return rows


def _open(X, sample_weight, backend, n_clusters, centers, fit, estimator, metric: Metric) -> Rows:
    """:func:`open_rows` for a checked backend; ``metric``: the registered
    entry whose projection the rows are read through (once, by the
    function for their kind of input)."""
    if isinstance(X, Iterator):  # a generator of batches: read once, no second pass
        raise TypeError(
            f"X must be an array, a sparse matrix or a dask array; got a "
            f"{type(X).__name__}, which can be read only once. Pass batches one at a "
            "time to MiniBatchRBFKMeans.partial_fit, or stack them into one array."
        )

    def known(shape) -> int | None:
        """Check X's shape against the fit; the pass's work (``n * d * k``)."""
        n, d = (int(s) for s in shape)
        if estimator is not None and not fit and d != estimator.n_features_in_:
            raise ValueError(
                f"X has {d} features, but {type(estimator).__name__} is expecting "
                f"{estimator.n_features_in_} features as input."
            )
        k = _n_centers(n_clusters, centers)
        return None if k is None else n * d * k

    if is_device_array(X):
        if not metric.cuda:
            raise ValueError(
                f"metric={metric.name!r} does not take CUDA arrays yet: pass the data as a "
                "numpy array (backend='cpu'), or use metric='euclidean' on unit rows."
            )
        choose(backend, X, None)  # refuses backend="cpu"
        from .cuda.arrays import as_device
        from .cuda.rows import DeviceRows

        X = as_device(X)  # a numba view of CuPy or torch memory
        if X.ndim == 2:
            known(X.shape)
        return DeviceRows.from_input(X, sample_weight, fitting=fit)

    if is_dask_array(X):
        if backend == "cuda":
            raise ValueError(
                "backend='cuda' does not take dask arrays: their chunks run on the "
                "workers' CPUs (backend='cpu' or 'auto')."
            )
        from .dask import check_array as check_dask_array
        from .dask import make_rows

        X = check_dask_array(X)  # metadata only: values are checked chunk by chunk
        known(X.shape)
        return make_rows(metric.dask(X), sample_weight, persist=fit)

    if is_sparse(X):
        if backend == "cuda":
            raise ValueError(
                "backend='cuda' does not take sparse input: the sparse kernels run on "
                "the CPU (backend='cpu' or 'auto')."
            )
        X = _host_array(X, estimator, fit, not metric.scaled)
        known(X.shape)
        w = check_sample_weight(sample_weight, X.shape[0])
        return SparseRows(metric.csr(X), w)

    if fit and streams(X):  # values checked block by block in the first pass
        work = known(X.shape)
        if not metric.cuda or choose(backend, X, work) == "cpu":
            return StreamedRows(X, check_sample_weight(sample_weight, X.shape[0]), metric=metric)
        X = _host_array(X, estimator, fit, not metric.scaled)
    else:
        X = _host_array(X, estimator, fit, not metric.scaled)
        work = known(X.shape)
    w = check_sample_weight(sample_weight, X.shape[0])
    if metric.cuda and choose(backend, X, work) == "cuda":
        from .cuda.rows import DeviceRows

        return DeviceRows.from_host(X, w)
    return InMemoryRows(metric.dense(X), w)


def assign_logits(Z, mode: int, backend: str = "auto"):
    """Row-wise softmax or entmax15 (``mode``) of logits ``Z`` of shape
    (n, k) or (k,), over the last axis: the logits' own entry, beside the
    rows sources (logits are not data: they are named "Z" in errors and
    their magnitude is not limited).

    The result has Z's shape and lives where Z does: a numba device array
    for CUDA logits, numpy for host logits, which run on the GPU only with
    ``backend="cuda"`` (under ``"auto"`` they stay on the CPU: the work per
    byte is small).
    """
    backend = check_backend(backend)
    if isinstance(Z, Iterator):
        raise TypeError(f"Z must be an array of logits; got a {type(Z).__name__}.")
    if is_device_array(Z):
        choose(backend, Z, None)  # refuses backend="cpu"
        from .cuda import arrays, passes

        Zd, shape, _ = arrays.device_logits(Z)
        return passes.assign_logits(Zd, int(mode)).reshape(shape)
    Z = as_float_array(Z, "Z", ndim=(1, 2))
    flat = Z.reshape(-1, Z.shape[-1])
    if choose(backend, flat, None) == "cuda":
        from numba import cuda

        from .cuda import passes

        return passes.assign_logits(cuda.to_device(flat), int(mode)).copy_to_host().reshape(Z.shape)
    return K.assign_logits(flat, mode).reshape(Z.shape)


def _host_array(X, estimator, fit: bool, coordinates: bool = True):
    """Host data validated as a C-contiguous float32/float64 array, or
    sparse data as a :class:`~fastrbfkm._kernels.CSR`; without
    ``coordinates`` (rows to be scaled to unit length) finite values of any
    magnitude pass."""
    sparse = is_sparse(X)
    if estimator is not None:
        refuse_tensor_with_grad(X, "X")
        options = dict(
            dtype=[np.float64, np.float32], order="C", accept_sparse="csr" if sparse else False
        )
        if fit:
            X = check_array(X, input_name="X", **options)
        else:
            # new data in the fit's dtype: float32 rows of a float64 fit are
            # measured in float64, as the fit was
            fitted = getattr(estimator, "cluster_centers_", None)
            if fitted is not None:
                options["dtype"] = fitted.dtype
            X = validate_data(estimator, X, reset=False, **options)
        # magnitude only
        if sparse:
            return as_csr(X, "X", dtype=X.dtype, fitting=fit, coordinates=coordinates)
        return as_float_array(X, "X", dtype=X.dtype, coordinates=coordinates, fitting=fit)
    if sparse:
        return as_csr(X, "X", fitting=fit, coordinates=coordinates)
    return as_float_array(X, "X", coordinates=coordinates, fitting=fit)
