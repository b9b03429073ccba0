"""One kernel for dense and CSR rows: the steps that touch X, by layout.

A kernel calls the names below with X as their first argument; numba
compiles the dense step (:mod:`.distances`, :mod:`.dense`) for an array X
and its twin (:mod:`.sparse`) for a :class:`~.sparse.CSR`, with the same
signature and meaning. Everything else in a kernel (the row partition, the
assignments, the folds of the statistics) is shared.

When editing a step: numba's on-disk cache checks only the kernel's own
source file, so a kernel whose file is unchanged keeps its compiled copy of
the old step. Delete ``fastrbfkm/_kernels/__pycache__/*.nb[ic]`` (or touch
the kernels' files) before measuring or testing a changed step, one that a
``git pull`` changed included; a fresh install or clone compiles everything
anew.
"""

from numba import types
from numba.extending import overload

from . import dense, distances, sparse


def by_layout(name: str, dense_step, sparse_step):
    """A function callable from numba code only, running ``dense_step`` for
    an array first argument and ``sparse_step`` for a CSR (its ``choices``,
    for tests that follow the kernels' calls)."""

    def step(*args):
        raise TypeError(f"{name} is called from numba kernels only.")

    step.__name__ = step.__qualname__ = name
    step.choices = {"dense": dense_step, "CSR": sparse_step}

    @overload(step)
    def choose(*args):
        chosen = dense_step if isinstance(args[0], types.Array) else sparse_step
        return lambda *args: chosen(*args)

    return step


def _pair(name: str, dense_module):
    return by_layout(name, getattr(dense_module, name), getattr(sparse, name))


dims = _pair("dims", dense)
rows_per_block = _pair("rows_per_block", dense)
is_direct = _pair("is_direct", dense)
centers_for = _pair("centers_for", dense)
distance_buffers = _pair("distance_buffers", distances)
nearest_buffers = _pair("nearest_buffers", distances)
column_buffers = _pair("column_buffers", distances)
gemm_buffers = _pair("gemm_buffers", dense)
sqdist_rows = _pair("sqdist_rows", distances)
sqdist_cols = _pair("sqdist_cols", distances)
nearest_rows = _pair("nearest_rows", distances)
direct_row = _pair("direct_row", distances)
add_row = _pair("add_row", dense)
transfer_buffer = _pair("transfer_buffer", dense)
sums_transposed = _pair("sums_transposed", dense)
mean_sqdists = _pair("mean_sqdists", dense)
move_row = _pair("move_row", dense)
scatter_rows = _pair("scatter_rows", dense)
project_row = _pair("project_row", dense)
scatter_row = _pair("scatter_row", dense)
scatter_cell = _pair("scatter_cell", dense)
cell_buffers = _pair("cell_buffers", dense)
seed_norms = _pair("seed_norms", dense)
seed_rows = _pair("seed_rows", dense)
to_seed = _pair("to_seed", dense)
seed_buffers = _pair("seed_buffers", dense)
seed_distances = _pair("seed_distances", dense)
