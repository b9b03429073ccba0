"""Which rows source holds the data: numpy in memory, a memory-mapped file
streamed in blocks, or the chunks of a dask array.

The public entry points call these at their boundary; the fit loop only sees
the :class:`fastrbfkm._rows.Rows` they return. Dask is imported only when a
dask array arrives (a dask array cannot exist before ``dask.array`` is
imported, so asking needs no import).
"""

from __future__ import annotations

import sys

from ._rows import InMemoryRows, Rows
from ._streaming import StreamedRows, streams
from ._validation import as_float_array, check_sample_weight


def is_dask_array(X) -> bool:
    """Whether X is a ``dask.array.Array`` (without importing dask)."""
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(X, module.Array)


def lazy_input(X, name: str = "X"):
    """X checked without reading its values, or None when X is neither a dask
    array nor a memory-mapped file to stream (:func:`fastrbfkm._streaming.streams`)."""
    if is_dask_array(X):
        from .dask import check_array

        return check_array(X, name)
    if streams(X):
        return X
    return None


def check_input(X, name: str = "X"):
    """A dask array's metadata checked (values: in the first pass), or numpy
    input checked at once (:func:`fastrbfkm._validation.as_float_array`)."""
    if is_dask_array(X):
        from .dask import check_array

        return check_array(X, name)
    return as_float_array(X, name, coordinates=True)


def make_rows(X, sample_weight) -> Rows:
    """The rows source for checked X (:func:`lazy_input` or numpy) and its weights."""
    if is_dask_array(X):
        from .dask import make_rows as dask_rows

        return dask_rows(X, sample_weight)
    w = check_sample_weight(sample_weight, X.shape[0])
    if streams(X):
        return StreamedRows(X, w)
    return InMemoryRows(X, w)
