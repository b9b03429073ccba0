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

import inspect

from numba import types
from numba.extending import overload

from . import dense, distances, sparse


def by_layout(name: str, dense_step, sparse_step, inline: str = "never"):
    """A function callable from numba code only, running ``dense_step`` for
    an array first argument and ``sparse_step`` for a CSR (its ``choices``,
    for tests that follow the kernels' calls). ``inline="always"`` puts the
    step's code in the caller (both steps must be ``inline="always"`` too):
    for the small steps called once a row, as numba does not inline a
    compiled function into another."""

    def step(*args):
        raise TypeError(f"{name} is called from numba kernels only.")

    step.__name__ = step.__qualname__ = name
    step.choices = {"dense": dense_step, "CSR": sparse_step}

    # The step's own parameters, not *args: numba inlines no call with *args.
    names = list(inspect.signature(dense_step.py_func).parameters)
    params = ", ".join(names)

    def implementation(first):
        chosen = dense_step if isinstance(first, types.Array) else sparse_step
        return eval(f"lambda {params}: chosen({params})", {"chosen": chosen})

    scope = {"implementation": implementation}
    exec(f"def choose({params}):\n    return implementation({names[0]})", scope)
    overload(step, inline=inline)(scope["choose"])

    return step


def _pair(name: str, dense_module, inline: str = "never"):
    return by_layout(name, getattr(dense_module, name), getattr(sparse, name), inline)


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
add_row = _pair("add_row", dense, inline="always")
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
