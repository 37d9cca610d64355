"""RNN, LSTM and GRU against PyTorch: outputs, final states and every gradient (input, initial
state, each parameter), through the CPU's fused layer kernels and through their
decompositions (the kernels hidden, as on a backend without them), float32 and float64;
packed sequences, bidirectional stacks, batch_first, given and default states; one kernel
call per layer and direction; gradients of gradients; cpu autocast's dtypes."""

from __future__ import annotations

from typing import Any

import ember
import numpy as np
import pytest
from ember._dispatch import DispatchMode
from ember.backends import registry

torch = pytest.importorskip("torch")

LAYER_OPS = (
    "lstm_layer",
    "lstm_layer_backward",
    "gru_layer",
    "gru_layer_backward",
    "rnn_layer",
    "rnn_layer_backward",
)
KINDS = [("LSTM", {}), ("GRU", {}), ("RNN", {}), ("RNN", {"nonlinearity": "relu"})]
SHAPES = [
    {"num_layers": 1},
    {"num_layers": 2, "bidirectional": True},
    {"num_layers": 2, "batch_first": True},
    {"num_layers": 1, "bidirectional": True, "batch_first": True, "bias": False},
]
TOL = {"float32": 2e-5, "float64": 1e-12}
L, N, IN, HID = 5, 3, 4, 6


def _pair(kind: str, dtype: str, **kw: Any) -> tuple[Any, Any]:
    torch.manual_seed(0)
    tm = getattr(torch.nn, kind)(IN, HID, **kw).to(getattr(torch, dtype))
    em = getattr(ember.nn, kind)(IN, HID, **kw).to(getattr(ember, dtype))
    em.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, em


def _states(kind: str, kw: dict[str, Any], dtype: str, rng: np.random.Generator) -> list[np.ndarray]:
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    n = 2 if kind == "LSTM" else 1
    return [rng.standard_normal((layers, N, HID)).astype(dtype) for _ in range(n)]


def _run(lib: Any, m: Any, x: np.ndarray, hx: list[np.ndarray] | None, seed: int, packed: Any = None) -> list:
    """Forward, a loss touching every output, backward; everything as NumPy."""
    xt = lib.tensor(x, requires_grad=True)
    hs = [lib.tensor(h, requires_grad=True) for h in hx] if hx else []
    inp = xt
    if packed is not None:
        inp = lib.nn.utils.rnn.pack_padded_sequence(
            xt, packed, batch_first=m.batch_first, enforce_sorted=False
        )
    state = None if not hs else (tuple(hs) if len(hs) == 2 else hs[0])
    out, h_n = m(inp, state)
    if packed is not None:
        out = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=m.batch_first)[0]
    h_n = list(h_n) if isinstance(h_n, tuple) else [h_n]
    rng = np.random.default_rng(seed)
    loss = (out * lib.tensor(rng.standard_normal(tuple(out.shape)).astype(x.dtype))).sum()
    for h in h_n:
        loss = loss + (h * lib.tensor(rng.standard_normal(tuple(h.shape)).astype(x.dtype))).sum()
    loss.backward()
    grads = [xt.grad] + [h.grad for h in hs] + [p.grad for _, p in m.named_parameters()]
    return [t.detach().numpy() for t in [out, *h_n, *grads]]


def _compare(kind: str, kw: dict[str, Any], dtype: str, with_hx: bool, packed: Any = None) -> None:
    tm, em = _pair(kind, dtype, **kw)
    rng = np.random.default_rng(1)
    shape = (N, L, IN) if kw.get("batch_first") else (L, N, IN)
    x = rng.standard_normal(shape).astype(dtype)
    hx = _states(kind, kw, dtype, rng) if with_hx else None
    want = _run(torch, tm, x, hx, 2, packed)
    got = _run(ember, em, x, hx, 2, packed)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=TOL[dtype], atol=TOL[dtype])


@pytest.fixture(params=["kernel", "decomposition"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "decomposition":
        lb = registry.get("cpu")
        for op in LAYER_OPS:
            monkeypatch.setitem(lb.k, op, None)
    return request.param


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", SHAPES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
@pytest.mark.parametrize(("kind", "extra"), KINDS, ids=["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
def test_outputs_and_every_gradient_as_torch(kind: str, extra: dict, kw: dict, dtype: str, path: str) -> None:
    _compare(kind, {**kw, **extra}, dtype, with_hx=kw.get("num_layers") == 2)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize(("kind", "extra"), KINDS, ids=["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
def test_packed_sequences_as_torch(kind: str, extra: dict, batch_first: bool, path: str) -> None:
    kw = {"num_layers": 2, "bidirectional": True, "batch_first": batch_first, **extra}
    _compare(kind, kw, "float64", with_hx=True, packed=[3, 5, 2])


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_unbatched_input_as_torch(kind: str) -> None:
    tm, em = _pair(kind, "float64", num_layers=2)
    x = np.random.default_rng(3).standard_normal((L, IN))
    t_out, e_out = tm(torch.tensor(x))[0], em(ember.tensor(x))[0]
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12, atol=1e-12)


class _Count(DispatchMode):
    def __init__(self) -> None:
        self.ops: dict[str, int] = {}

    def __ember_dispatch__(self, op: str, backend: str, run: Any, args: tuple, kwargs: dict) -> Any:
        self.ops[op] = self.ops.get(op, 0) + 1
        return run(*args, **kwargs)


@pytest.mark.parametrize(("kind", "op"), [("LSTM", "lstm_layer"), ("GRU", "gru_layer"), ("RNN", "rnn_layer")])
def test_one_kernel_call_per_layer_and_direction(kind: str, op: str) -> None:
    m = getattr(ember.nn, kind)(IN, HID, num_layers=2, bidirectional=True)
    x = ember.randn(L, N, IN, requires_grad=True)
    with _Count() as fwd:
        out = m(x)[0]
    with _Count() as bwd:
        out.sum().backward()
    assert fwd.ops[op] == 4 and fwd.ops["matmul"] == 4  # the input projections
    assert "tanh" not in fwd.ops and "sigmoid" not in fwd.ops
    assert bwd.ops[op + "_backward"] == 4 and "tanh" not in bwd.ops


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_gradients_of_gradients_as_torch(kind: str) -> None:
    tm, em = _pair(kind, "float64")
    x = np.random.default_rng(4).standard_normal((3, 2, IN))
    res = []
    for lib, m in ((torch, tm), (ember, em)):
        xt = lib.tensor(x, requires_grad=True)
        (gx,) = lib.autograd.grad(m(xt)[0].pow(2).sum(), xt, create_graph=True)
        gx.pow(2).sum().backward()
        res.append([xt.grad.detach().numpy()] + [p.grad.detach().numpy() for p in m.parameters()])
    for g, w in zip(*res[::-1]):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_cpu_autocast_dtypes_as_torch(kind: str) -> None:
    tm, em = _pair(kind, "float32")
    x = np.random.default_rng(5).standard_normal((L, N, IN)).astype(np.float32)
    with torch.autocast("cpu"):
        t_out, t_h = tm(torch.tensor(x))
    with ember.autocast("cpu"):
        e_out, e_h = em(ember.tensor(x))
    t_h, e_h = (t_h[0], e_h[0]) if kind == "LSTM" else (t_h, e_h)
    names = [str(t.dtype).split(".")[-1] for t in (e_out, e_h, t_out, t_h)]
    assert names[:2] == names[2:]
    np.testing.assert_allclose(e_out.float().detach().numpy(), t_out.float().detach().numpy(), atol=3e-2)


def test_flatten_parameters_keeps_parameters_and_results() -> None:
    tm, em = _pair("LSTM", "float64", num_layers=2)
    before = list(em.parameters())
    em.flatten_parameters()
    tm.flatten_parameters()
    assert all(a is b for a, b in zip(em.parameters(), before)) and len(before) == 8
    x = np.random.default_rng(6).standard_normal((L, N, IN))
    np.testing.assert_allclose(
        em(ember.tensor(x))[0].detach().numpy(), tm(torch.tensor(x))[0].detach().numpy(), rtol=1e-12
    )


def _error(lib: Any, fn: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as info:
        fn(lib)
    return type(info.value), str(info.value).replace(lib.__name__ + ".", "")


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_input_of_another_dtype_than_the_weights_as_torch(kind: str) -> None:
    def call(lib: Any) -> Any:
        return getattr(lib.nn, kind)(IN, HID)(lib.zeros(L, N, IN, dtype=lib.float64))

    t, e = _error(torch, call), _error(ember, call)
    assert e[0] is t[0] is ValueError and e[1] == t[1]


@pytest.mark.parametrize("kind", ["GRU", "RNN"])
def test_state_of_another_dtype_than_the_weights_as_torch(kind: str) -> None:
    def call(lib: Any) -> Any:
        return getattr(lib.nn, kind)(IN, HID)(lib.zeros(L, N, IN), lib.zeros(1, N, HID, dtype=lib.float64))

    t, e = _error(torch, call), _error(ember, call)
    assert e[0] is t[0] is RuntimeError and e[1] == t[1]


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_empty_batch_and_empty_sequence_as_pytorch(kind: str, batch_first: bool) -> None:
    """A batch of zero rows runs (empty outputs and gradients, states of batch 0); a sequence of
    zero steps is PyTorch's error."""
    got = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = getattr(lib.nn, kind)(IN, HID, num_layers=2, bidirectional=True, batch_first=batch_first)
        x = lib.zeros((L, 0, IN) if not batch_first else (0, L, IN), requires_grad=True)
        out, state = m(x)
        out.sum().backward()
        h = state[0] if kind == "LSTM" else state
        got.append((tuple(out.shape), tuple(h.shape), tuple(x.grad.shape)))
        with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
            m(lib.zeros((0, N, IN) if not batch_first else (N, 0, IN)))
    assert (
        got[0] == got[1] == ((L, 0, 2 * HID) if not batch_first else (0, L, 2 * HID), (4, 0, HID), got[0][2])
    )
