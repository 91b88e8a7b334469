"""Hypothesis strategies spanning whole parameter ranges, orders of magnitude included."""

from hypothesis import strategies as st


def magnitudes(lo_exp: float, hi_exp: float, zero: bool = True, signed: bool = False):
    """Floats ``10**U(lo_exp, hi_exp)``, optionally 0 and a random sign."""
    mag = st.floats(lo_exp, hi_exp).map(lambda e: 10.0**e)
    if signed:
        mag = st.tuples(mag, st.sampled_from([-1.0, 1.0])).map(lambda p: p[0] * p[1])
    if zero:
        mag = st.one_of(st.just(0.0), mag)
    return mag


#: Means over the documented domain |mu| <= 1e4 (log-spread, both signs, and moderate values).
means = st.one_of(magnitudes(-300, 4, signed=True), st.floats(-30, 30))
#: Standard deviations over 0 <= sigma <= 1e4.
sigmas = st.one_of(magnitudes(-300, 4), st.floats(0, 5))
