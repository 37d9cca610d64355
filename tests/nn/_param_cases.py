"""Cases for parametrizations, weight/spectral norm and CTC loss, written for either library.

Each case takes the library (``torch`` or ``ember``) and returns named NumPy arrays (or lists
of state_dict keys). ``make_param_refs.py`` runs them with PyTorch and writes the results
into ``_param_refs.py`` as literals; ``test_nn_parametrize.py`` and ``test_nn_ctc.py`` run
them with ember and compare.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

import numpy as np

W34 = np.arange(12, dtype=np.float64).reshape(3, 4) / 7 - 0.5
B3 = np.array([0.1, -0.2, 0.3])
X24 = np.linspace(-1, 1, 8).reshape(2, 4)
G23 = np.array([[0.3, -1.2, 0.5], [1.1, 0.4, -0.7]])
SQ = W34[:, :3] + np.diag([1.0, -0.5, 0.7])
CONV_W = np.sin(np.arange(2 * 3 * 2 * 2, dtype=np.float64)).reshape(2, 3, 2, 2)
CONV_X = np.cos(np.arange(1 * 3 * 4 * 4, dtype=np.float64) / 3).reshape(1, 3, 4, 4)


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy().copy()


def _linear(lib: Any, w: np.ndarray = W34, bias: bool = True) -> Any:
    m = lib.nn.Linear(w.shape[1], w.shape[0], bias=bias).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(w))
        if bias:
            m.bias.copy_(lib.tensor(B3[: w.shape[0]]))
    return m


def _conv(lib: Any, transposed: bool = False) -> Any:
    cls = lib.nn.ConvTranspose2d if transposed else lib.nn.Conv2d
    m = cls(3, 2, 2).double() if not transposed else cls(2, 3, 2).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(CONV_W))
        m.bias.zero_()
    return m


def _pz(lib: Any) -> Any:
    return import_module(lib.__name__ + ".nn.utils.parametrizations")


def _backward_linear(lib: Any, m: Any) -> None:
    (m(lib.tensor(X24)) * lib.tensor(G23)).sum().backward()


def weight_norm_linear(lib: Any, dim: Any = 0) -> dict:
    m = _pz(lib).weight_norm(_linear(lib), dim=dim)
    _backward_linear(lib, m)
    pw = m.parametrizations.weight
    return {
        "keys": list(m.state_dict().keys()),
        "g": _np(pw.original0),
        "weight": _np(m.weight),
        "g_grad": pw.original0.grad.cpu().numpy(),
        "v_grad": pw.original1.grad.cpu().numpy(),
    }


def weight_norm_conv(lib: Any, dim: int = 1) -> dict:
    m = _pz(lib).weight_norm(_conv(lib), dim=dim)
    m(lib.tensor(CONV_X)).pow(2).sum().backward()
    pw = m.parametrizations.weight
    return {
        "g": _np(pw.original0),
        "g_grad": pw.original0.grad.cpu().numpy(),
        "v_grad": pw.original1.grad.cpu().numpy(),
    }


def _set_uv(lib: Any, sn: Any, u: list, v: list) -> None:
    with lib.no_grad():
        sn._u.copy_(lib.tensor(u, dtype=lib.float64))
        sn._v.copy_(lib.tensor(v, dtype=lib.float64))


def spectral_norm_linear(lib: Any, n_power_iterations: int = 1) -> dict:
    m = _pz(lib).spectral_norm(_linear(lib), n_power_iterations=n_power_iterations)
    sn = m.parametrizations.weight[0]
    _set_uv(lib, sn, [0.6, 0.8, 0.0], [0.5, 0.5, 0.5, 0.5])
    _backward_linear(lib, m)
    out = {
        "keys": list(m.state_dict().keys()),
        "u": sn._u.cpu().numpy().copy(),
        "v": sn._v.cpu().numpy().copy(),
        "grad": m.parametrizations.weight.original.grad.cpu().numpy(),
    }
    m.eval()
    out["eval_weight"] = _np(m.weight)
    out["eval_u"] = sn._u.cpu().numpy().copy()
    return out


def spectral_norm_convt(lib: Any) -> dict:
    m = _pz(lib).spectral_norm(_conv(lib, transposed=True))
    sn = m.parametrizations.weight[0]
    _set_uv(lib, sn, [0.0, 1.0, 0.0], [0.5, -0.5, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0])
    return {"dim": [sn.dim], "weight": _np(m.weight), "u": sn._u.cpu().numpy().copy()}


def orthogonal_square(lib: Any, orthogonal_map: Any = None) -> dict:
    m = _pz(lib).orthogonal(_linear(lib, SQ), orthogonal_map=orthogonal_map)
    pw = m.parametrizations.weight
    out = {"keys": list(m.state_dict().keys()), "weight": _np(m.weight), "original": _np(pw.original)}
    with lib.no_grad():
        # householder reads the diagonal as fixed signs; the other maps ignore it
        pw.original.copy_(lib.tensor(SQ / 3 - np.diag(np.diag(SQ / 3)) + np.diag([1.0, -1.0, 1.0])))
    (m(lib.tensor(X24[:, :3])) * lib.tensor(G23)).sum().backward()
    out["moved"] = _np(m.weight)
    out["grad"] = pw.original.grad.cpu().numpy()
    return out


def orthogonal_rect(lib: Any, tall: bool) -> dict:
    w = W34.T + np.eye(4, 3) if tall else W34 + np.eye(3, 4)
    m = _pz(lib).orthogonal(lib.nn.Linear(w.shape[1], w.shape[0], bias=False).double())
    m.weight = lib.tensor(w)
    pw = m.parametrizations.weight
    out = {"weight": _np(m.weight)}
    with lib.no_grad():
        pw.original.copy_(lib.tensor(w / 4))
    m.weight.pow(3).sum().backward()
    out["moved"] = _np(m.weight)
    out["grad"] = pw.original.grad.cpu().numpy()
    return out


def orthogonal_householder_no_trivialization(lib: Any, shape: tuple) -> dict:
    w = np.random.default_rng(len(shape) * 10 + shape[-1]).standard_normal(shape)
    lin = lib.nn.Linear(shape[-1], shape[-2], bias=False).double()
    lin.register_parameter("weight", lib.nn.Parameter(lib.tensor(w)))
    _pz(lib).orthogonal(lin, orthogonal_map="householder", use_trivialization=False)
    original = lin.parametrizations.weight.original
    out = {"original": _np(original), "weight": _np(lin.weight)}
    lin.weight.pow(3).sum().backward()
    out["grad"] = original.grad.cpu().numpy()
    return out


def orthogonal_cayley_no_trivialization(lib: Any) -> dict:
    lin = _linear(lib, np.random.default_rng(5).standard_normal((3, 3)))
    _pz(lib).orthogonal(lin, orthogonal_map="cayley", use_trivialization=False)
    return {"weight": _np(lin.weight), "original": _np(lin.parametrizations.weight.original)}


def old_weight_norm(lib: Any) -> dict:
    m = lib.nn.utils.weight_norm(_linear(lib), dim=0)
    keys = list(m.state_dict().keys())
    _backward_linear(lib, m)
    out = {"keys": keys, "g_grad": m.weight_g.grad.cpu().numpy(), "v_grad": m.weight_v.grad.cpu().numpy()}
    lib.nn.utils.remove_weight_norm(m)
    out["removed_keys"] = list(m.state_dict().keys())
    out["weight"] = _np(m.weight)
    return out


def old_spectral_norm(lib: Any) -> dict:
    m = lib.nn.utils.spectral_norm(_linear(lib), n_power_iterations=2)
    keys = list(m.state_dict().keys())
    with lib.no_grad():
        m.weight_u.copy_(lib.tensor([0.6, 0.8, 0.0], dtype=lib.float64))
        m.weight_v.copy_(lib.tensor([0.5, 0.5, 0.5, 0.5], dtype=lib.float64))
    _backward_linear(lib, m)
    out = {"keys": keys, "u": m.weight_u.cpu().numpy().copy(), "v": m.weight_v.cpu().numpy().copy()}
    out["grad"] = m.weight_orig.grad.cpu().numpy()
    m.eval()
    out["eval_out"] = _np(m(lib.tensor(X24)))
    lib.nn.utils.remove_spectral_norm(m)
    out["removed_keys"] = list(m.state_dict().keys())
    out["weight"] = _np(m.weight)
    return out


CTC_X = np.random.default_rng(0).standard_normal((6, 3, 4))
CTC_TARGETS = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]])


def ctc(lib: Any, reduction: str, dtype: str = "float64") -> dict:
    x = lib.tensor(CTC_X, dtype=getattr(lib, dtype), requires_grad=True)
    loss = lib.nn.functional.ctc_loss(
        x.log_softmax(2), lib.tensor(CTC_TARGETS), (6, 5, 4), (3, 2, 1), reduction=reduction
    )
    loss.sum().backward()
    return {"loss": _np(loss), "grad": x.grad.cpu().numpy()}


def ctc_concat_blank(lib: Any) -> dict:
    x = lib.tensor(CTC_X, requires_grad=True)
    loss = lib.nn.CTCLoss(blank=3, reduction="none")(
        x.log_softmax(2), lib.tensor([1, 1, 1, 0, 2, 2]), lib.tensor([6, 4, 3]), lib.tensor([3, 1, 2])
    )
    (loss * lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)).sum().backward()
    return {"loss": _np(loss), "grad": x.grad.cpu().numpy()}


def ctc_infeasible(lib: Any, zero_infinity: bool) -> dict:
    # sample 0 needs 4 frames for [1, 2, 2] (a blank between the repeats) but has 3
    x = lib.tensor(CTC_X, requires_grad=True)
    loss = lib.nn.functional.ctc_loss(
        x.log_softmax(2),
        lib.tensor(CTC_TARGETS),
        (3, 5, 4),
        (3, 2, 1),
        reduction="none",
        zero_infinity=zero_infinity,
    )
    out = {"loss": _np(loss)}
    if zero_infinity:
        loss.sum().backward()
        out["grad"] = x.grad.cpu().numpy()
    return out


def ctc_unbatched_empty(lib: Any) -> dict:
    x = lib.tensor(CTC_X)
    one = lib.nn.CTCLoss()(x[:, 0].log_softmax(1), lib.tensor([1, 2]), (6,), (2,))
    empty = lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor(CTC_TARGETS), (6, 5, 4), (0, 2, 1))
    return {"one": _np(one), "empty": _np(empty)}


CASES = {
    "weight_norm_dim0": lambda lib: weight_norm_linear(lib, 0),
    "weight_norm_dimNone": lambda lib: weight_norm_linear(lib, None),
    "weight_norm_conv_dim1": lambda lib: weight_norm_conv(lib, 1),
    "spectral_norm_1": lambda lib: spectral_norm_linear(lib, 1),
    "spectral_norm_3": lambda lib: spectral_norm_linear(lib, 3),
    "spectral_norm_convt": spectral_norm_convt,
    "orthogonal_default": lambda lib: orthogonal_square(lib, None),
    "orthogonal_cayley": lambda lib: orthogonal_square(lib, "cayley"),
    "orthogonal_householder": lambda lib: orthogonal_square(lib, "householder"),
    "orthogonal_tall": lambda lib: orthogonal_rect(lib, True),
    "orthogonal_wide": lambda lib: orthogonal_rect(lib, False),
    "orthogonal_householder_square": lambda lib: orthogonal_householder_no_trivialization(lib, (3, 3)),
    "orthogonal_householder_tall": lambda lib: orthogonal_householder_no_trivialization(lib, (4, 3)),
    "orthogonal_householder_wide": lambda lib: orthogonal_householder_no_trivialization(lib, (3, 5)),
    "orthogonal_householder_batch": lambda lib: orthogonal_householder_no_trivialization(lib, (2, 4, 3)),
    "orthogonal_cayley_no_trivialization": orthogonal_cayley_no_trivialization,
    "old_weight_norm": old_weight_norm,
    "old_spectral_norm": old_spectral_norm,
    "ctc_none": lambda lib: ctc(lib, "none"),
    "ctc_mean": lambda lib: ctc(lib, "mean"),
    "ctc_sum": lambda lib: ctc(lib, "sum"),
    "ctc_mean_float32": lambda lib: ctc(lib, "mean", "float32"),
    "ctc_concat_blank": ctc_concat_blank,
    "ctc_infeasible": lambda lib: ctc_infeasible(lib, False),
    "ctc_zero_infinity": lambda lib: ctc_infeasible(lib, True),
    "ctc_unbatched_empty": ctc_unbatched_empty,
}
