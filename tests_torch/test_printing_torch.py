"""repr(ember tensor) == repr(torch tensor), character for character (``ember.`` for ``torch.``),
over shapes 0-d to 4-d, empty and summarised ones, every dtype, special values and print options.

Both tensors hold the same values: ember's is made from a NumPy array and torch's from ember's
values read back, so a difference is a printing difference, never a cast difference."""

from __future__ import annotations

import math

import ember
import numpy as np
import pytest
import torch

DTYPES = [d.name for d in ember.backends.ALL_DTYPES]  # the 12 dtypes, in promotion order

SHAPES = [
    (),
    (0,),
    (2, 0),
    (0, 3, 1),
    (1,),
    (5,),
    (3, 4),
    (2, 3, 4),
    (2, 1, 2, 3),
    (30,),
    (7, 13),
    (1001,),
    (40, 50),
    (3, 400),
    (400, 3),
    (10, 10, 11),
    (4, 5, 6, 10),
    (7, 7, 7, 7),
]

# option settings (PyTorch's set_printoptions keywords); each test resets to the default profile
OPTIONS = [
    {},
    {"precision": 2},
    {"precision": 0},
    {"precision": 7},
    {"threshold": 5},
    {"threshold": 20, "edgeitems": 1},
    {"threshold": 20, "edgeitems": 0},
    {"edgeitems": 5},
    {"linewidth": 40},
    {"linewidth": 200},
    {"linewidth": 5},
    {"sci_mode": True},
    {"sci_mode": False},
    {"profile": "short"},
    {"profile": "full"},
    {"profile": "short", "precision": 5, "sci_mode": True},
]

VALUES = ["randn", "ints", "wide", "special", "zeros", "huge", "tiny", "bigints", "mixed"]


def _floats(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n float64 values of one family: each family reaches a different branch of the format."""
    x = rng.standard_normal(n)
    if kind == "ints":
        return np.round(x * 40)
    if kind == "wide":
        return np.sign(x) * 10.0 ** rng.uniform(-6, 9, n)
    if kind == "special":
        picks = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 2.5])
        return np.where(rng.random(n) < 0.5, picks[rng.integers(0, 6, n)], x)
    if kind == "zeros":
        return np.where(rng.random(n) < 0.5, -0.0, 0.0)
    if kind == "huge":
        return x * 1e30
    if kind == "tiny":
        return x * 1e-30
    if kind == "bigints":
        return np.round(x * 1e9)
    if kind == "mixed":
        return np.where(rng.random(n) < 0.3, np.round(x * 1000), x / 1000)
    return x


def _host_values(dtype: str, shape: tuple[int, ...], kind: str, rng: np.random.Generator) -> np.ndarray:
    n = math.prod(shape)
    x = _floats(kind, n, rng)
    if dtype == "bool":
        return (x > 0).reshape(shape)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        x = np.clip(np.nan_to_num(np.round(x), posinf=info.max, neginf=info.min), info.min, info.max)
        return x.astype(dtype).reshape(shape)
    if dtype.startswith("complex"):
        y = _floats(kind, n, rng)[::-1]
        return (x + 1j * y).astype(dtype).reshape(shape)
    if dtype == "bfloat16":
        return x.astype(np.float32).reshape(shape)
    with np.errstate(over="ignore"):
        return x.astype(dtype).reshape(shape)


def _pair(dtype: str, shape: tuple[int, ...], kind: str, rng: np.random.Generator):
    """The same values as an ember tensor and a torch tensor."""
    e = ember.from_numpy(_host_values(dtype, shape, kind, rng))
    if dtype == "bfloat16":
        e = e.to(ember.bfloat16)
        return e, torch.from_numpy(e.float().numpy().copy()).to(torch.bfloat16)
    return e, torch.from_numpy(e.numpy().copy())


def _views(e: ember.Tensor, t: torch.Tensor):
    """The tensor itself, and for >= 2-d a strided view of its transpose."""
    yield "", e, t
    if e.ndim >= 2:
        yield ".T[::2]", e.transpose(0, 1)[::2], t.transpose(0, 1)[::2]


def _expected(t: torch.Tensor) -> str:
    return repr(t).replace("torch.", "ember.")


@pytest.fixture(autouse=True)
def _default_options():
    yield
    ember.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    ember.set_default_dtype(ember.float32)
    torch.set_default_dtype(torch.float32)


def _mismatches(dtype: str, shapes: list, kinds: list) -> list[str]:
    rng = np.random.default_rng(7)
    bad = []
    for shape in shapes:
        for kind in kinds if dtype != "bool" else ["randn"]:
            e, t = _pair(dtype, shape, kind, rng)
            for how, ev, tv in _views(e, t):
                got, want = repr(ev), _expected(tv)
                if got != want:
                    bad.append(f"{dtype} {shape}{how} {kind}:\nember: {got}\ntorch: {want}")
    return bad


@pytest.mark.parametrize("dtype", DTYPES)
def test_repr_matches_torch(dtype):
    bad = _mismatches(dtype, SHAPES, VALUES)
    assert not bad, f"{len(bad)} mismatches; first ones:\n" + "\n\n".join(bad[:3])


# the options are checked on fewer tensors (PyTorch's own printing is what takes the time)
OPTION_DTYPES = ["bool", "int32", "float16", "float32", "complex64"]
OPTION_SHAPES = [(), (0,), (5,), (3, 4), (2, 3, 4), (30,), (1001,), (40, 50), (10, 10, 11)]
OPTION_VALUES = ["randn", "ints", "wide", "special", "zeros"]


@pytest.mark.parametrize(
    "options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "default"
)
@pytest.mark.parametrize("dtype", OPTION_DTYPES)
def test_repr_with_options_matches_torch(dtype, options):
    ember.set_printoptions(**options)
    torch.set_printoptions(**options)
    bad = _mismatches(dtype, OPTION_SHAPES, OPTION_VALUES)
    assert not bad, f"{len(bad)} mismatches; first ones:\n" + "\n\n".join(bad[:3])


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64", "bool"])
def test_repr_matches_torch_under_float64_default(dtype):
    # which dtypes go unnamed follows the default dtype (float64 and complex128 here)
    ember.set_default_dtype(ember.float64)
    torch.set_default_dtype(torch.float64)
    bad = _mismatches(dtype, OPTION_SHAPES, ["randn"])
    assert not bad, "\n\n".join(bad[:3])


GRAPH_CASES = [
    # (what to print, built from x: a float tensor that requires grad)
    lambda x: x,
    lambda x: x * 2,
    lambda x: x.exp(),
    lambda x: x.sum(),
    lambda x: x[1:],
    lambda x: x.reshape(-1) if x.ndim else x + 1,
    lambda x: x.detach(),
]


@pytest.mark.parametrize("linewidth", [80, 20, 30])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (1001,), (40, 50)])
@pytest.mark.parametrize("case", range(len(GRAPH_CASES)))
def test_autograd_suffixes_match_torch(case, shape, linewidth):
    ember.set_printoptions(linewidth=linewidth)
    torch.set_printoptions(linewidth=linewidth)
    e, t = _pair("float32", shape, "randn", np.random.default_rng(1))
    e.requires_grad_(True)
    t.requires_grad_(True)
    if case == 4 and not shape:
        return  # a 0-d tensor cannot be sliced (both raise)
    assert repr(GRAPH_CASES[case](e)) == _expected(GRAPH_CASES[case](t))


@pytest.mark.parametrize("dtype", ["float32", "int32", "complex64"])
def test_suffixes_wrap_like_torch(dtype):
    # dtype and grad suffixes move to their own line when the last line would pass linewidth
    for width in range(5, 60, 3):
        ember.set_printoptions(linewidth=width)
        torch.set_printoptions(linewidth=width)
        e, t = _pair(dtype, (2, 7), "wide", np.random.default_rng(width))
        assert repr(e) == _expected(t), width


def test_get_printoptions_and_profiles_match_torch():
    from torch._tensor_str import get_printoptions as torch_get

    for options in OPTIONS:
        ember.set_printoptions(**options)
        torch.set_printoptions(**options)
        assert ember.get_printoptions() == torch_get(), options


def test_printoptions_context_restores_like_torch():
    from torch._tensor_str import printoptions as torch_printoptions

    e, t = _pair("float64", (2000,), "randn", np.random.default_rng(3))
    with ember.printoptions(precision=1, edgeitems=2), torch_printoptions(precision=1, edgeitems=2):
        assert repr(e) == _expected(t)
    assert repr(e) == _expected(t)
    assert ember.get_printoptions()["precision"] == 4


def test_parameter_and_metadata_reprs_match_torch():
    e, t = _pair("float32", (2, 3), "randn", np.random.default_rng(4))
    assert repr(ember.nn.Parameter(e)) == _expected(torch.nn.Parameter(t))
    assert str(ember.nn.Parameter(e)) == str(torch.nn.Parameter(t)).replace("torch.", "ember.")
    assert repr(ember.nn.Linear(3, 2).weight).startswith("Parameter containing:\ntensor([[")
    assert repr(e.shape) == _expected(t.shape) == "ember.Size([2, 3])"
    assert repr(ember.Size([])) == _expected(torch.Size([]))
    for name in DTYPES:
        assert repr(getattr(ember, name)) == _expected(getattr(torch, name))
        assert str(getattr(ember, name)) == str(getattr(torch, name)).replace("torch.", "ember.")
    for spec in ["cpu", "cpu:0"]:
        assert repr(ember.device(spec)) == repr(torch.device(spec))
        assert str(ember.device(spec)) == str(torch.device(spec))
    assert repr(ember.device("opencl", 0)) == repr(torch.device("cuda", 0)).replace("cuda", "opencl")


def test_str_and_format_match_torch():
    e, t = _pair("float32", (), "randn", np.random.default_rng(5))
    assert str(e) == str(t)
    assert f"{e:.3f}" == f"{t:.3f}" and f"{e}" == f"{t}" and f"{e:>12}" == f"{t:>12}"
    p, q = ember.nn.Parameter(e), torch.nn.Parameter(t)
    assert f"{p}" == f"{q}".replace("torch.", "ember.")
    with pytest.raises(TypeError) as got:
        f"{p:.2f}"
    with pytest.raises(TypeError) as want:
        f"{q:.2f}"
    assert str(got.value) == str(want.value) == "unsupported format string passed to Parameter.__format__"
    v, w = _pair("float32", (3,), "randn", np.random.default_rng(5))
    assert str(v) == str(w) and f"{v}" == f"{w}"
