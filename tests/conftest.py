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
