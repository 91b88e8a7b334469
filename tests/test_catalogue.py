"""Where Params finds the registry of models: installed by the package, loaded once."""

import subprocess
import sys

import pytest

from slr_theory import Params, catalogue
from slr_theory.models import registry


def test_the_package_installs_the_models_registry_and_params_asks_it():
    assert catalogue.registry() is registry
    assert Params.paper().model == registry.model_of("pointwise", "erf")


def test_importing_params_imports_no_model_until_one_is_asked_for():
    code = (
        "import sys, slr_theory.params\n"
        "print('slr_theory.models' in sys.modules)\n"
        "slr_theory.params.Params.paper()\n"
        "print('slr_theory.models' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_a_loader_is_called_once_and_a_wrong_one_is_refused():
    calls = []

    def loader():
        calls.append(1)
        return registry

    try:
        catalogue.install(loader)
        assert catalogue.registry() is registry and catalogue.registry() is registry
        assert calls == [1]
    finally:
        catalogue.install(lambda: registry)
    with pytest.raises(ValueError, match="`loader` must be callable, got 3"):
        catalogue.install(3)
