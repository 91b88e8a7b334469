"""The models: the registry, one contract, and each model's forward map."""

import numpy as np
import pytest

from slr_theory import Nonlinearity, Params, risk, risk_grad
from slr_theory.engine import table
from slr_theory.models import (
    Erf,
    Model,
    Pointwise,
    Softmax,
    Softmax1,
    attention_names,
    model_of,
    register_model,
    takes_nonlinearity,
    unregister_model,
)
from slr_theory.nonlinearity import nonlinearity_of

OV = (0.3, 0.2, 0.1, 0.05, 0.02)
MODELS = {
    "erf": Params.paper(),
    "tanh": Params.paper().replace(nonlinearity="tanh"),
    "sigmoid": Params.paper().replace(nonlinearity="sigmoid"),
    "softmax": Params(d=20, L=4, lam=0.5, gamma=0.7, attention="softmax"),
    "softmax1": Params(d=20, L=4, lam=0.5, gamma=0.7, attention="softmax1"),
}


def test_the_registry_builds_each_built_in_model():
    assert attention_names()[:3] == ("pointwise", "softmax", "softmax1")
    assert model_of() == Erf() and model_of("pointwise", "erf").feature_bounds_proved
    assert model_of("pointwise", "tanh") == Pointwise(nonlinearity_of("tanh"))
    assert model_of("softmax") == Softmax()
    assert takes_nonlinearity("pointwise") and not takes_nonlinearity("softmax")
    assert takes_nonlinearity(Pointwise(nonlinearity_of("arctan")))
    assert not takes_nonlinearity(Softmax())
    for p in MODELS.values():
        assert isinstance(p.model, Model) and p.model is p.model  # built once, then cached


def test_a_users_sigma_named_erf_is_integrated_not_given_erfs_closed_forms():
    erf = nonlinearity_of("erf")
    user = Nonlinearity("erf", erf.f, erf.df, erf.d2f)  # the same function, by the user
    p = Params.paper().replace(nonlinearity=user)
    assert type(p.model) is Pointwise and table(p, 0.1, 1).loop_kernel() is None
    assert table(Params.paper(), 0.1, 1).loop_kernel() is not None
    # the two doors give the same risk to the quadrature's precision
    np.testing.assert_allclose(risk(p, *OV), risk(Params.paper(), *OV), rtol=1e-12)


def test_wrong_models_are_refused_naming_the_argument():
    with pytest.raises(ValueError, match="`attention` must be one of 'pointwise', 'softmax'"):
        Params.paper().replace(attention="relu")
    with pytest.raises(ValueError, match="`attention` must be one of"):
        model_of(3)
    with pytest.raises(ValueError, match="`nonlinearity` applies to pointwise attention"):
        Params.paper().replace(attention="softmax", nonlinearity="tanh")
    with pytest.raises(ValueError, match="`nonlinearity` must be left at its default"):
        Params.paper().replace(attention=Softmax(), nonlinearity="tanh")
    with pytest.raises(ValueError, match="`name` must be an identifier"):
        register_model("two words", lambda sigma: Softmax(), nonlinearity=False)
    with pytest.raises(ValueError, match="`name` must not be a built-in's"):
        register_model("softmax", lambda sigma: Softmax(), nonlinearity=False)
    with pytest.raises(ValueError, match="`name` must be a model register_model added"):
        unregister_model("softmax")
    with pytest.raises(ValueError, match="`factory` must be callable"):
        register_model("other", 3, nonlinearity=False)
    with pytest.raises(ValueError, match="softmax attention needs `lam`"):
        Params.paper(lam=20.0).replace(attention="softmax")


def test_a_model_object_is_the_model_its_name_builds():
    p = Params.paper(lam=0.05)
    for named, obj in (
        ({"nonlinearity": "tanh"}, Pointwise(nonlinearity_of("tanh"))),
        ({"attention": "softmax"}, Softmax()),
    ):
        a, b = p.replace(**named), p.replace(attention=obj)
        assert a.model == b.model and a.predictor == b.predictor
        assert risk(a, *OV) == risk(b, *OV)
        np.testing.assert_array_equal(risk_grad(a, *OV), risk_grad(b, *OV))


def test_labels_come_from_the_model():
    assert MODELS["erf"].attention_tag == "" and MODELS["erf"].model.label == "erf"
    assert MODELS["tanh"].attention_tag == ", σ = tanh"
    assert "tanh(λ X_ℓ·k)" in MODELS["tanh"].predictor
    assert MODELS["softmax"].attention_tag == ", softmax attention"
    assert MODELS["softmax1"].attention_tag == ", softmax-1 attention"
    assert "1 + Σ_j" in MODELS["softmax1"].predictor
    assert repr(MODELS["tanh"].model) == "Pointwise(sigma='tanh')" and repr(Erf()) == "Erf()"


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_forward_maps_partials_are_its_derivatives(name):
    """``dT/dU`` and ``dT/dV`` (what SGD uses) against central differences of ``T``."""
    p = MODELS[name]
    m = p.model
    U, V = 2.0 * np.random.default_rng(0).standard_normal((2, 3, p.L))
    T, dU, dV = m.forward(U, V, p.lam, derivatives=True)
    assert T.shape == (3,) and dU.shape == dV.shape == U.shape
    h = 1e-5
    for j in range(p.L):
        e = np.zeros(p.L)
        e[j] = h
        fd_u = (m.forward(U + e, V, p.lam)[0] - m.forward(U - e, V, p.lam)[0]) / (2 * h)
        fd_v = (m.forward(U, V + e, p.lam)[0] - m.forward(U, V - e, p.lam)[0]) / (2 * h)
        np.testing.assert_allclose(dU[..., j], fd_u, rtol=1e-7, atol=1e-10)
        np.testing.assert_allclose(dV[..., j], fd_v, rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_odd_weights_are_what_the_forward_map_does(name):
    """The symmetry the model declares is the one its forward map has, at random tokens."""
    p = MODELS[name]
    U, V = np.random.default_rng(1).standard_normal((2, 5, p.L))
    T = p.model.forward(U, V, p.lam)[0]
    flipped = p.model.forward(-U, -V, p.lam)[0]
    # odd weights give equal sums up to a rounding per term; a model without them differs
    # by O(1): 1e-13 separates the two on any platform
    assert np.allclose(flipped, T, rtol=1e-13, atol=0) == p.model.odd_weights


def test_a_registered_model_is_built_by_params_and_computes():
    """A new attention: one subclass and one registration, then every door takes it."""

    class Half(Pointwise):
        @property
        def tag(self) -> str:
            return ", half tanh"

    half = Nonlinearity(
        "half",
        lambda u: 0.5 * np.tanh(u),
        lambda u: 0.5 / np.cosh(u) ** 2,
        lambda u: -np.tanh(u) / np.cosh(u) ** 2,
    )
    register_model("half", lambda sigma: Half(half), nonlinearity=False)
    try:
        assert "half" in attention_names()
        p = Params.paper().replace(attention="half")
        assert p.attention_tag == ", half tanh" and p.model.odd_weights
        same = Params.paper().replace(nonlinearity=half)
        assert risk(p, *OV) == risk(same, *OV)
    finally:
        unregister_model("half")
    with pytest.raises(ValueError, match="`attention` must be one of"):
        Params.paper().replace(attention="half")


SKEW = Nonlinearity(  # sigma(0) = 0, not odd
    "skew",
    lambda u: np.tanh(u) + 0.5 * np.tanh(u) ** 2,
    lambda u: (1 + np.tanh(u)) / np.cosh(u) ** 2,
    lambda u: (1 / np.cosh(u) ** 2 - 2 * np.tanh(u) * (1 + np.tanh(u))) / np.cosh(u) ** 2,
)


@pytest.mark.parametrize(
    ("params", "origin"),
    [
        (MODELS["erf"], True),
        (MODELS["tanh"].replace(s=2), True),
        (MODELS["sigmoid"], False),
        (MODELS["softmax"], False),
        (MODELS["softmax1"].replace(s=2), False),
        (Params(d=400, L=10, lam=0.1, gamma=0.7, nonlinearity=SKEW), False),
    ],
    ids=["erf", "tanh-s2", "sigmoid", "softmax", "softmax1-s2", "skew"],
)
def test_m_is_invariant_and_the_origin_critical_as_computed(params, origin):
    """Computed from the table on a grid of M; checked here against central differences
    of the risk's value (the table's value rows, not its gradient rows)."""
    m = params.model
    assert m.manifold_invariant(params)
    assert m.origin_critical(params) == origin
    h = 1e-6
    fd = []
    for i in range(5):
        e = np.zeros(5)
        e[i] = h
        # off M only where feasible: theta, eta, rho at the origin move freely
        fd.append((risk(params, *e) - risk(params, *(-e))) / (2 * h))
    fd = np.array(fd)
    assert (np.max(np.abs(fd)) < 1e-7) == origin
    # off M at a point of M: theta, eta and rho's partials keep M invariant
    at = np.array([0.4, -0.3, 0.0, 0.0, 0.0])
    g = risk_grad(params, *at)
    assert abs(g[2] + at[0] * g[4]) < 1e-9 and abs(g[3] + at[1] * g[4]) < 1e-9


def test_a_model_object_the_registry_builds_is_saved_by_its_names():
    """A saved Params read back as another model: Pointwise(tanh) was stored as
    attention 'pointwise' with the default nonlinearity, and read back as erf."""
    from slr_theory.results import from_plain, to_plain

    p = Params.paper().replace(attention=Pointwise(nonlinearity_of("tanh")))
    assert (p.attention, p.nonlinearity) == ("pointwise", "tanh")
    assert p == Params.paper().replace(nonlinearity="tanh")
    back = from_plain(Params, to_plain(p))
    assert back == p and back.model == Pointwise(nonlinearity_of("tanh"))
    soft = Params.paper(lam=0.05).replace(attention=Softmax())
    assert soft.attention == "softmax" and from_plain(Params, to_plain(soft)) == soft
    sink = Params.paper(lam=0.05).replace(attention=Softmax1())
    assert sink.attention == "softmax1" and from_plain(Params, to_plain(sink)) == sink
    assert sink != soft and sink.model == Softmax1()


def test_a_model_object_no_saved_file_could_name_is_refused_when_saved():
    from slr_theory.results import to_plain

    class Shifted(Softmax):  # not in the registry
        pass

    p = Params.paper(lam=0.05).replace(attention=Shifted())
    assert isinstance(p.attention, Shifted) and risk(p, *OV) == risk(
        Params.paper(lam=0.05).replace(attention="softmax"), *OV
    )
    with pytest.raises(TypeError, match="cannot be saved: register it"):
        to_plain(p)


@pytest.mark.parametrize("name", [*MODELS, "relu", "one token"])
def test_key_free_decided_on_m_alone_only_where_every_point_would_decide_it(name):
    """`key_free` stops after M's grid where a key partial there exceeds 1e-12 of a bound
    of every partial (the table's |C| times the model's feature bounds): the test over M's
    grid and the points off M then fails too. The whole test (every point, as before) is
    computed here beside it: the same answer, the early stop never taken where the model
    is key-free (softmax over one token) or has no bound (ReLU is unbounded)."""
    from slr_theory.models.base import KEY_FREE_POINTS, _key_free, _key_moves_on_m, _m_grid

    p = {
        "relu": Params.paper().replace(nonlinearity="relu"),
        "one token": Params(d=20, L=1, lam=0.5, gamma=0.7, attention="softmax"),
    }.get(name) or MODELS[name]
    tab = table(p, p.lam, 1)
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 6, KEY_FREE_POINTS))
    k, v = x / np.linalg.norm(x, axis=0), y / np.linalg.norm(y, axis=0)
    off = np.array([k[0], v[1], v[0], k[1], (k * v).sum(axis=0)])
    g = tab(np.concatenate([_m_grid(), off], axis=1))
    scale = float(np.max(np.abs(g))) or 1.0
    whole = bool(np.all(np.abs(g[[0, 3, 4]]) <= 1e-12 * scale))
    early = _key_moves_on_m(p.model, p, tab)
    _key_free.cache_clear()
    assert p.model.key_free(p) == whole
    assert early == (name not in ("relu", "one token"))  # taken wherever it can be
    assert not (early and whole)
    if name != "relu":  # the bound it stands on holds at every point computed
        bound = np.abs(np.asarray(tab.C)) @ p.model.feature_bounds(p, 1)
        assert np.all(np.abs(g) <= bound[:, None] * (1.0 + 1e-6))
