"""SciPy's first import without the NumPy modules it reads but never runs."""

import subprocess
import sys
import textwrap

import pytest


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.strip()


def test_scipy_after_the_package_leaves_f2py_testing_and_ma_unrun_and_all_work():
    got = _run(
        """
        import sys
        import slr_theory
        import scipy.special
        import numpy as np
        print(type(np.f2py).__name__, type(np.testing).__name__, type(np.ma).__name__,
              "numpy.f2py.f2py2e" in sys.modules, "numpy.testing._private.utils" in sys.modules,
              "numpy.ma.core" in sys.modules)
        from slr_theory.experiments import run
        run(["gd_manifold"], steps_scale=1e-3)  # a PGD run reads none of them
        print(type(np.ma).__name__)
        import numpy.f2py as f2py  # the import statement NumPy's own __getattr__ uses
        from numpy.testing import assert_allclose
        assert_allclose([1.0], [1.0])
        import numpy.ma as ma
        masked = ma.masked_invalid([1.0, np.nan])
        print(callable(f2py.run_main), type(np.testing).__name__, f2py is np.f2py,
              type(np.ma).__name__, int(masked.count()), ma is np.ma)
        """
    )
    assert got.splitlines() == [
        "_LazyModule _LazyModule _LazyModule False False False",
        "_LazyModule",
        "True module True module 1 True",
    ]


def test_a_process_that_imported_scipy_first_is_left_as_it_is():
    got = _run(
        """
        import scipy.special
        import sys
        import numpy as np
        import slr_theory
        print(type(np.f2py).__name__, any(type(f).__name__ == "_BeforeScipy" for f in sys.meta_path))
        """
    )
    assert got == "module False"


def test_defer_skips_what_is_imported_or_missing():
    from slr_theory.startup import defer

    assert defer(("json.decoder",)) == []
    with pytest.raises(ModuleNotFoundError):
        defer(("no_such_package_here.module",))
    assert defer(("json.no_such_module",)) == []
