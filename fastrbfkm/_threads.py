"""BLAS on one thread while our kernels run.

The kernels split rows into chunks that run in parallel, and each chunk does
its cross terms as small BLAS matrix products (numba's ``np.dot``, which calls
scipy's BLAS). Letting BLAS start threads of its own inside every chunk would
oversubscribe the cores, so the public entry points run with BLAS limited to
one thread (scikit-learn's KMeans does the same).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


@functools.lru_cache(maxsize=1)
def _controller():
    import scipy.linalg.cython_blas  # noqa: F401  (the BLAS numba's np.dot calls: load it first)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread(func: F) -> F:
    """Decorator: run ``func`` with every BLAS library limited to one thread."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with _controller().limit(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
