"""Shared test configuration: hypothesis profiles, seeds, mpmath precision."""

import os

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# "ci": what .ci/run uses (bounded time); "dev": the default locally; "thorough": -m slow sweeps.
settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.register_profile("thorough", max_examples=400, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
)


@pytest.fixture(autouse=True)
def _reset_precision():
    """Every test starts at mpmath's default precision and with NumPy's error state."""
    mp.mp.dps = 15
    with np.errstate(all="warn", under="ignore"):  # NumPy defaults: IEEE underflow is correct
        yield
    mp.mp.dps = 15
