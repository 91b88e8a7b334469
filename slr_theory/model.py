"""The former name of :mod:`slr_theory.sampling` (the data model, the predictor on tokens,
Monte Carlo risks), kept so that ``from slr_theory.model import ...`` still works; the
name beside :mod:`slr_theory.models` (the attention models) misled."""

from .sampling import (  # noqa: F401
    MAX_FLOATS,
    MAX_SAMPLES,
    MonteCarloRisk,
    monte_carlo_risk,
    overlaps_of,
    predict,
    random_targets,
    sample,
    vectors_from_overlaps,
)

__all__: list[str] = []  # every name has its home in slr_theory.sampling
