"""Parametrizations, weight norm and spectral norm against PyTorch's recorded results."""

from __future__ import annotations

import copy
import pickle
import warnings

import ember
import numpy as np
import pytest
from _param_cases import CASES, SQ, W34
from _param_refs import REFS
from ember import nn
from ember.nn.utils import parametrizations, parametrize


def _check(name: str) -> None:
    ember.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the hook-based weight_norm's notice
        got = CASES[name](ember)
    assert set(got) == set(REFS[name])
    for key, want in REFS[name].items():
        if isinstance(want, tuple):
            values, shape = want
            assert list(got[key].shape) == shape, (name, key)
            np.testing.assert_allclose(
                got[key].ravel(), values, rtol=1e-9, atol=1e-12, err_msg=f"{name}.{key}"
            )
        else:
            assert got[key] == want, (name, key)


NAMES = [n for n in REFS if not n.startswith("ctc")]


@pytest.mark.parametrize("name", NAMES)
def test_matches_pytorch(name: str) -> None:
    _check(name)


class Symmetric(nn.Module):
    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a: ember.Tensor) -> ember.Tensor:
        return a.triu()


class Scale(nn.Module):
    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return 2.0 * x

    def right_inverse(self, a: ember.Tensor) -> ember.Tensor:
        return a / 2.0


def _square() -> nn.Linear:
    m = nn.Linear(3, 3).double()
    with ember.no_grad():
        m.weight.copy_(ember.tensor(SQ))
    return m


def test_register_symmetric_and_state_dict() -> None:
    m = parametrize.register_parametrization(_square(), "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear"
    assert isinstance(m, nn.Linear)
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    w = m.weight.detach().cpu().numpy()
    np.testing.assert_allclose(w, np.triu(SQ) + np.triu(SQ, 1).T)
    # the original went through right_inverse (triu) when registered
    np.testing.assert_allclose(m.parametrizations.weight.original.detach().cpu().numpy(), np.triu(SQ))
    assert type(nn.Linear(2, 2)).__name__ == "Linear"


def test_gradient_reaches_original() -> None:
    m = parametrize.register_parametrization(_square(), "weight", Symmetric())
    m.weight.sum().backward()
    want = np.triu(np.ones((3, 3))) + np.triu(np.ones((3, 3)), 1)
    np.testing.assert_allclose(m.parametrizations.weight.original.grad.cpu().numpy(), want)


def test_chained_and_assignment() -> None:
    m = _square()
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "weight", Scale())
    assert len(m.parametrizations.weight) == 2
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), 2 * (np.triu(SQ) + np.triu(SQ, 1).T))
    target = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    m.weight = ember.tensor(target)
    np.testing.assert_allclose(m.parametrizations.weight.original.detach().cpu().numpy(), np.triu(target) / 2)
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), target)


def test_remove_leave_parametrized() -> None:
    m = parametrize.register_parametrization(_square(), "weight", Symmetric())
    want = m.weight.detach().cpu().numpy()
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear
    assert not parametrize.is_parametrized(m)
    assert list(m.state_dict()) == ["bias", "weight"]
    assert isinstance(m.weight, nn.Parameter)
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), want)


def test_remove_to_original() -> None:
    m = parametrize.register_parametrization(_square(), "weight", Symmetric())
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), np.triu(SQ))


def test_remove_weight_norm_sequence() -> None:
    m = parametrizations.weight_norm(nn.Linear(4, 3).double())
    with ember.no_grad():
        m.weight = ember.tensor(W34)
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), W34)
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), W34)
    assert list(m.state_dict()) == ["bias", "weight"]


def test_is_parametrized_and_two_tensors() -> None:
    m = _square()
    assert not parametrize.is_parametrized(m)
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "bias", Scale())
    assert parametrize.is_parametrized(m)
    assert parametrize.is_parametrized(m, "bias")
    parametrize.remove_parametrizations(m, "weight")
    assert type(m).__name__ == "ParametrizedLinear"
    parametrize.remove_parametrizations(m, "bias")
    assert type(m) is nn.Linear


def test_cached() -> None:
    m = parametrize.register_parametrization(_square(), "weight", Symmetric())
    assert m.weight is not m.weight
    with parametrize.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight


def test_load_state_dict_round_trip() -> None:
    a = parametrizations.weight_norm(nn.Linear(4, 3).double())
    b = parametrizations.weight_norm(nn.Linear(4, 3).double())
    b.load_state_dict(a.state_dict())
    np.testing.assert_allclose(b.weight.detach().cpu().numpy(), a.weight.detach().cpu().numpy())


def test_errors() -> None:
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        parametrize.register_parametrization(_square(), "nope", Symmetric())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(_square(), "weight")

    class Shrink(nn.Module):
        def forward(self, x: ember.Tensor) -> ember.Tensor:
            return x[:2]

    with pytest.raises(ValueError, match="may not change the dtype or shape"):
        parametrize.register_parametrization(_square(), "weight", Shrink())
    parametrize.register_parametrization(_square(), "weight", Shrink(), unsafe=True)
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
        parametrizations.orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
        parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        parametrizations.spectral_norm(nn.Linear(3, 3), n_power_iterations=0)
    with pytest.warns(FutureWarning, match="deprecated in favor of `nn.utils.parametrizations.weight_norm`"):
        m = nn.utils.weight_norm(nn.Linear(3, 3))
    with (
        pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore", FutureWarning)
        nn.utils.weight_norm(m)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(nn.Linear(3, 3))


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_stays_orthogonal_after_a_step(orthogonal_map: str) -> None:
    ember.manual_seed(0)
    m = parametrizations.orthogonal(nn.Linear(5, 3).double(), orthogonal_map=orthogonal_map)
    opt = ember.optim.SGD(m.parameters(), lr=0.1)
    m(ember.randn(4, 5, dtype=ember.float64)).pow(2).sum().backward()
    opt.step()
    w = m.weight.detach().cpu().numpy()
    np.testing.assert_allclose(w @ w.T, np.eye(3), atol=1e-12)


def test_spectral_norm_divides_by_largest_singular_value() -> None:
    ember.manual_seed(0)
    m = parametrizations.spectral_norm(nn.Linear(4, 3).double(), n_power_iterations=20)
    for _ in range(3):
        m.weight  # noqa: B018 (each training-mode access runs power iterations)
    m.eval()
    u = m.parametrizations.weight[0]._u.clone()
    s = np.linalg.svd(m.weight.detach().cpu().numpy(), compute_uv=False)
    assert abs(s[0] - 1.0) < 1e-9
    assert ember.equal(m.parametrizations.weight[0]._u, u)


def test_weight_norm_gradcheck() -> None:
    from ember.autograd import gradcheck
    from ember.nn.utils.parametrizations import _weight_norm

    ember.manual_seed(0)
    v = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    g = ember.randn(3, 1, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda v, g: _weight_norm(v, g, 0), (v, g))


def test_deepcopy_gets_its_own_class_and_pickle_is_refused() -> None:
    m = nn.Sequential(parametrizations.orthogonal(_square()), nn.ReLU())
    c = copy.deepcopy(m)
    assert type(c[0]).__name__ == "ParametrizedLinear" and type(c[0]) is not type(m[0])
    np.testing.assert_allclose(c[0].weight.detach().cpu().numpy(), m[0].weight.detach().cpu().numpy())
    assert c[0].parametrizations.weight.original is not m[0].parametrizations.weight.original
    parametrize.remove_parametrizations(c[0], "weight")
    assert type(c[0]) is nn.Linear
    assert m[0].weight.shape == (3, 3)
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)


def test_module_casts_reach_originals_and_buffers() -> None:
    m = parametrizations.spectral_norm(nn.Linear(4, 3))
    m.double()
    assert m.weight.dtype == ember.float64
    assert m.parametrizations.weight[0]._u.dtype == ember.float64


def test_weight_norm_loads_hook_based_checkpoints() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = nn.utils.weight_norm(nn.Linear(4, 3).double())
    sd = old.state_dict()
    assert list(sd) == ["bias", "weight_g", "weight_v"]
    new = parametrizations.weight_norm(nn.Linear(4, 3).double())
    result = new.load_state_dict(sd)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert list(sd) == ["bias", "weight_g", "weight_v"]  # the caller's dict is left alone
    np.testing.assert_allclose(new.weight.detach().cpu().numpy(), old.weight.detach().cpu().numpy())
    seq_old = nn.Sequential(nn.Identity(), old)
    seq_new = nn.Sequential(nn.Identity(), parametrizations.weight_norm(nn.Linear(4, 3).double()))
    seq_new.load_state_dict(seq_old.state_dict())
    np.testing.assert_allclose(seq_new[1].weight.detach().cpu().numpy(), old.weight.detach().cpu().numpy())


def test_load_state_dict_pre_hook() -> None:
    seen = []

    def rename(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):  # type: ignore[no-untyped-def]
        seen.append((type(module).__name__, prefix))
        if prefix + "w" in state_dict:
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")

    m = nn.Sequential(nn.Linear(2, 2))
    handle = m[0].register_load_state_dict_pre_hook(rename)
    sd = {"0.w": ember.ones(2, 2), "0.bias": ember.zeros(2)}
    m.load_state_dict(sd)
    assert seen == [("Linear", "0.")]
    assert float(m[0].weight.sum()) == 4.0
    handle.remove()
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "0.w"'):
        m.load_state_dict(sd)


def test_orthogonal_without_trivialization_assignment() -> None:
    m = parametrizations.orthogonal(nn.Linear(3, 3).double(), "weight", "cayley", use_trivialization=False)
    with pytest.raises(NotImplementedError, match="when use_trivialization=False"):
        m.weight = ember.eye(3, dtype=ember.float64)
    h = parametrizations.orthogonal(
        nn.Linear(4, 3).double(), "weight", "householder", use_trivialization=False
    )
    q = np.linalg.qr(np.arange(12.0).reshape(3, 4).T + np.eye(4, 3))[0].T
    h.weight = ember.tensor(q)
    np.testing.assert_allclose(
        h.weight.detach().cpu().numpy(), q, atol=1e-12
    )  # orthogonal rows come back as set
