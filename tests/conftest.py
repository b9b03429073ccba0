import os

# The CUDA kernels' tests run on numba's CUDA simulator unless a run on a
# real GPU asks otherwise (NUMBA_ENABLE_CUDASIM=0). numba reads the variable
# once, when it is first imported, so it is set before anything imports it;
# the CPU kernels do not look at it.
os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import pytest
from hypothesis import HealthCheck, settings

from .helpers import DTYPES

settings.register_profile(
    "fastrbfkm",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("fastrbfkm")


@pytest.fixture(params=DTYPES, ids=["float32", "float64"])
def dtype(request):
    return request.param
