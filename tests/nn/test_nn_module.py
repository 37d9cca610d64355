"""nn.Module: registries, iteration, state_dict, modes, conversion, hooks, repr; Parameter."""

from __future__ import annotations

import copy
import pickle

import ember
import numpy as np
import pytest
from ember import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Parameter(ember.rand(1))
        self.b = nn.Parameter(ember.rand(1))

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return self.a * x + self.b


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)
        self.register_buffer("steps", ember.zeros(1))
        self.register_buffer("scratch", ember.zeros(2), persistent=False)

    def forward(self, x: ember.Tensor) -> ember.Tensor:
        return self.bn(self.fc(x))


def test_parameter_is_tensor_sharing_storage() -> None:
    t = ember.zeros(3)
    p = nn.Parameter(t)
    assert isinstance(p, ember.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    t.add_(1)
    assert p.tolist() == [1.0, 1.0, 1.0]
    assert not nn.Parameter(t, requires_grad=False).requires_grad
    assert repr(nn.Parameter(ember.tensor([1.0, 2.0], device="cpu"))) == (
        "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    )
    assert type(p * 2) is ember.Tensor


def test_parameter_deepcopy_and_pickle() -> None:
    p = nn.Parameter(ember.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q.tolist() == [1.0, 2.0] and q.data_ptr() != p.data_ptr()
    r = pickle.loads(pickle.dumps(p))
    assert isinstance(r, nn.Parameter) and r.requires_grad


def test_seed_net_two_parameters() -> None:
    net = Net()
    x = ember.arange(100, dtype=ember.float32)
    y = net(x)
    assert y.shape == (100,)
    params = list(net.parameters())
    assert len(params) == 2 and params[0] is net.a
    assert [n for n, _ in net.named_parameters()] == ["a", "b"]


def test_registries_and_iteration() -> None:
    m = nn.Sequential(Block(), nn.ReLU(), Block())
    names = [n for n, _ in m.named_parameters()]
    assert names == [
        "0.fc.weight",
        "0.fc.bias",
        "0.bn.weight",
        "0.bn.bias",
        "2.fc.weight",
        "2.fc.bias",
        "2.bn.weight",
        "2.bn.bias",
    ]
    assert [n for n, _ in m.named_buffers()][:4] == [
        "0.steps",
        "0.scratch",
        "0.bn.running_mean",
        "0.bn.running_var",
    ]
    assert [n for n, _ in m.named_modules()] == ["", "0", "0.fc", "0.bn", "1", "2", "2.fc", "2.bn"]
    assert len(list(m.children())) == 3 and len(list(m.modules())) == 8
    assert m.get_submodule("2.fc") is m[2].fc
    assert m.get_parameter("0.fc.bias") is m[0].fc.bias


def test_shared_parameters_listed_once() -> None:
    lin = nn.Linear(2, 2)
    m = nn.Sequential(lin, lin)
    assert len(list(m.parameters())) == 2
    assert len(list(m.named_parameters(remove_duplicate=False))) == 4


def test_setattr_rules() -> None:
    m = nn.Linear(2, 3)
    with pytest.raises(TypeError, match=r"cannot assign 'torch.FloatTensor' as parameter 'weight'"):
        m.weight = ember.zeros(3, 2)
    m.bias = None
    assert m.bias is None and "bias" in m._parameters
    with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__"):

        class Bad(nn.Module):
            def __init__(self) -> None:
                self.w = nn.Parameter(ember.zeros(1))

        Bad()
    with pytest.raises(KeyError, match="attribute 'in_features' already exists"):
        nn.Linear(1, 1).register_buffer("in_features", ember.zeros(1))
    del m.weight
    assert "weight" not in m._parameters


def test_state_dict_roundtrip() -> None:
    a, b = Block(), Block()
    sd = a.state_dict()
    assert list(sd) == [
        "steps",
        "fc.weight",
        "fc.bias",
        "bn.weight",
        "bn.bias",
        "bn.running_mean",
        "bn.running_var",
        "bn.num_batches_tracked",
    ]
    assert not sd["fc.weight"].requires_grad
    keys = b.load_state_dict(sd)
    assert keys.missing_keys == [] and keys.unexpected_keys == []
    assert repr(keys) == "<All keys matched successfully>"
    np.testing.assert_array_equal(b.fc.weight.detach().cpu().numpy(), a.fc.weight.detach().cpu().numpy())
    assert b.state_dict(keep_vars=True)["fc.weight"] is b.fc.weight
    del sd["bn.num_batches_tracked"]  # old checkpoints lack it; PyTorch loads such plain dicts strictly
    assert b.load_state_dict(sd).missing_keys == []


def test_load_state_dict_errors() -> None:
    m = nn.Linear(2, 3)
    sd = {"weight": ember.zeros(3, 2), "extra": ember.zeros(1)}
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict(sd)
    assert str(e.value) == (
        'Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: "bias". '
        '\n\tUnexpected key(s) in state_dict: "extra". '
    )
    keys = m.load_state_dict(sd, strict=False)
    assert keys.missing_keys == ["bias"] and keys.unexpected_keys == ["extra"]
    assert m.weight.abs().sum().item() == 0
    with pytest.raises(
        RuntimeError, match=r"size mismatch for weight: copying a param with shape torch.Size\(\[2, 2\]\)"
    ):
        m.load_state_dict({"weight": ember.zeros(2, 2), "bias": ember.zeros(3)})


def test_train_eval_and_requires_grad() -> None:
    m = nn.Sequential(nn.Linear(2, 2), nn.Dropout())
    assert m.training and m[1].training
    m.eval()
    assert not m.training and not m[1].training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_to_keeps_parameter_objects() -> None:
    m = Block()
    w = m.fc.weight
    m(ember.randn(4, 3)).sum().backward()
    m.to(ember.float64)
    assert m.fc.weight is w and w.dtype is ember.float64 and w.grad.dtype is ember.float64
    assert m.bn.num_batches_tracked.dtype is ember.int64
    assert m.double() is m and m.float().fc.weight.dtype is ember.float32
    assert m.to("cpu") is m and m.cpu() is m


def test_zero_grad_and_apply() -> None:
    m = nn.Linear(2, 2)
    m(ember.ones(1, 2)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m.weight.grad.abs().sum().item() == 0
    m.zero_grad()
    assert m.weight.grad is None
    seen = []
    nn.Sequential(m, nn.ReLU()).apply(lambda mod: seen.append(type(mod).__name__))
    assert seen == ["Linear", "ReLU", "Sequential"]


def test_forward_hooks() -> None:
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    out = m(ember.ones(3, 2))
    np.testing.assert_allclose(
        out.detach().cpu().numpy(), (m.bias + 1).detach().cpu().numpy()[None].repeat(3, 0), rtol=1e-6
    )
    assert calls == [(3, 2)]
    h1.remove()
    h2.remove()
    assert not m._forward_hooks and not m._forward_pre_hooks


def test_full_backward_hook() -> None:
    m = nn.Linear(3, 2)
    got = []
    m.register_full_backward_hook(lambda mod, gin, gout: got.append((gin, gout)))
    x = ember.randn(4, 3, requires_grad=True)
    m(x).sum().backward()
    (gin,), (gout,) = got[0]
    assert gin.shape == (4, 3) and gout.shape == (4, 2)
    np.testing.assert_allclose(gin.cpu().numpy(), x.grad.cpu().numpy())
    got.clear()
    m(ember.randn(4, 3)).sum().backward()
    assert got[0][0] == (None,)
    with ember.no_grad():
        assert m(x).shape == (4, 2)


def test_repr() -> None:
    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(1, 1)
            self.seq = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2))

    assert repr(M()) == (
        "M(\n"
        "  (linear): Linear(in_features=1, out_features=1, bias=True)\n"
        "  (seq): Sequential(\n"
        "    (0): Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))\n"
        "    (1): ReLU()\n"
        "    (2): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n"
        "  )\n"
        ")"
    )
    assert (
        repr(nn.BatchNorm2d(4))
        == "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    )
    assert repr(nn.Dropout(0.2)) == "Dropout(p=0.2, inplace=False)"
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == "Embedding(10, 3, padding_idx=0)"


def test_missing_forward() -> None:
    with pytest.raises(
        NotImplementedError, match=r'Module \[Module\] is missing the required "forward" function'
    ):
        nn.Module()(1)


def test_containers() -> None:
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seq.append(nn.Linear(2, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and len(seq[:2]) == 2
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    ml.append(nn.ReLU())
    assert len(ml) == 4 and len(list(ml.parameters())) == 6
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.ReLU()
    assert list(md.keys()) == ["a", "b"] and "a" in md
    pl = nn.ParameterList([ember.zeros(2), nn.Parameter(ember.ones(1))])
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pd = nn.ParameterDict({"w": ember.zeros(2)})
    assert isinstance(pd["w"], nn.Parameter) and list(pd.state_dict()) == ["w"]


def test_batchnorm_running_stats() -> None:
    bn = nn.BatchNorm1d(2)
    x = ember.tensor([[1.0, 2.0], [3.0, 6.0]])
    bn(x)
    np.testing.assert_allclose(bn.running_mean.cpu().numpy(), [0.2, 0.4], rtol=1e-6)
    np.testing.assert_allclose(bn.running_var.cpu().numpy(), [0.9 + 0.1 * 2.0, 0.9 + 0.1 * 8.0], rtol=1e-6)
    assert bn.num_batches_tracked.item() == 1
    bn.eval()
    out = bn(x)
    expected = (x.cpu().numpy() - [0.2, 0.4]) / np.sqrt(np.array([1.1, 1.7]) + 1e-5)
    np.testing.assert_allclose(out.detach().cpu().numpy(), expected, rtol=1e-5)


def test_dropout_modes() -> None:
    ember.manual_seed(0)
    d = nn.Dropout(0.5)
    x = ember.ones(1000)
    y = d(x)
    kept = (y != 0).sum().item()
    assert 400 < kept < 600 and set(np.unique(y.cpu().numpy())) <= {0.0, 2.0}
    d.eval()
    assert d(x) is x
    y2 = nn.Dropout2d(0.5)(ember.ones(4, 8, 3, 3))
    per_channel = y2.cpu().numpy().reshape(4, 8, 9)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))


def test_channel_dropout_shapes() -> None:
    ember.manual_seed(1)
    with pytest.warns(UserWarning, match="interpreted as shape \\(N, C, L\\)"):
        y = nn.functional.dropout2d(ember.ones(8, 16, 5), 0.5)
    per = y.cpu().numpy()
    assert np.all(per.min(-1) == per.max(-1))  # one draw per (N, C), as PyTorch
    assert not np.all(per[:, :, 0].min(0) == per[:, :, 0].max(0))
    y1 = nn.Dropout1d(0.5)(ember.ones(16, 7))  # unbatched (C, L)
    assert np.all(y1.cpu().numpy().min(-1) == y1.cpu().numpy().max(-1))
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        nn.functional.dropout1d(ember.ones(1, 2, 3, 4))
