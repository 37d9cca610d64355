"""ember.jit.script / save / load: TorchScript's API on ember.compile's capture, and the seeds'
TorchScript examples (002: ``@torch.jit.script`` batch_gather, a ``torch.jit.ScriptModule``
with ``@torch.jit.script_method`` trained with Adam, then with autocast and GradScaler)."""

from __future__ import annotations

import io
import os
import pickle
import zipfile

import ember
import pytest
from ember import jit, nn


def f(x, y):
    return x * y + 1


class Branchy(nn.Module):
    """Reads its own training flag in forward: the capture must key on it."""

    def __init__(self, n: int = 3) -> None:
        super().__init__()
        self.n = n
        self.lin = nn.Linear(n, 2)

    def forward(self, x):
        y = self.lin(x)
        return y * 2 if self.training else y * 3


class Stats(nn.Module):
    """A non-persistent buffer, a tied weight, plain attributes of several kinds."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.b.weight = self.a.weight
        self.register_buffer("scale", ember.full((4,), 0.5), persistent=False)
        self.tags = {"kind": ("x", 1, 2.5, None)}
        self.dtype_ = ember.float64
        self.act = nn.functional.relu
        self.shift = ember.full((4,), 0.25)  # a plain tensor attribute, neither buffer nor parameter

    def forward(self, x):
        return self.act(self.b(self.a(x))) * self.scale + self.shift


class Dropper(jit.ScriptModule):
    """The older API with a training branch of its own."""

    @jit.script_method
    def forward(self, x):
        return x + 1 if self.training else x - 1


class Holder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fn = lambda x: x

    def forward(self, x):
        return self.fn(x)


# -- script(fn) -------------------------------------------------------------------------------
def test_script_function_captures_on_first_call():
    s = jit.script(f)
    assert isinstance(s, jit.ScriptFunction) and s.__name__ == "f" and s.name == "f"
    assert s.code.startswith("# nothing captured yet") and s.graph.nodes() == []
    assert "nothing captured yet" in str(s.graph)
    x, y = ember.arange(6.0).reshape(2, 3), ember.full((2, 3), 2.0)
    expected = f(x, y)
    assert ember.equal(s(x, y), expected) and ember.equal(s(x, y), expected)
    assert s.graph.nodes() == ["mul", "add"]
    assert s.code.startswith("def replay(I):") and "['mul']" in s.code
    assert str(s.graph) == (
        "graph forward(%I0 : float32(2, 3, cpu), %I1 : float32(2, 3, cpu)):\n"
        "  %v0 = %I0\n  %v1 = %I1\n  %v2 = cpu::mul(%v0, %v1)\n  %v3 = cpu::add(%v2, 1.0)\n  return (%v3, )\n"
    )
    assert s.explain() == []


def test_script_example_inputs_capture_at_once():
    x = ember.ones(2)
    s = jit.script(lambda a: a.exp() * 2, example_inputs=[(x,)])
    assert s.graph.nodes() == ["exp", "mul"]
    m = nn.Linear(2, 1)
    sm = jit.script(m, example_inputs={m.forward: [(ember.ones(3, 2),)]})
    assert sm.graph.nodes() == ["permute", "matmul", "expand", "add"]


def test_script_returns_scripted_objects_as_they_are_and_rejects_others():
    s = jit.script(f)
    assert jit.script(s) is s
    sm = jit.script(nn.ReLU())
    assert jit.script(sm) is sm
    with pytest.raises(TypeError, match="expected a function or Module, got int"):
        jit.script(3)
    with pytest.raises(NotImplementedError, match="scripting a class"):
        jit.script(Branchy)


# -- script(module) -----------------------------------------------------------------------------
def test_script_module_shares_tensors_and_state_dict_keys():
    m = nn.Linear(3, 2)
    sm = jit.script(m)
    assert isinstance(sm, jit.ScriptModule) and isinstance(sm, nn.Module)
    assert list(sm.state_dict()) == ["weight", "bias"] and sm.weight is m.weight
    assert sm.in_features == 3 and sm.original_name == "Linear"
    assert repr(sm) == "RecursiveScriptModule(original_name=Linear)"
    assert sm.code.startswith("# nothing captured yet") and sm.graph.nodes() == []
    assert [p is q for p, q in zip(sm.parameters(), m.parameters())] == [True, True]


def test_script_module_copy_has_its_own_tensors_and_capture():
    import copy

    m = nn.Linear(2, 2)
    sm = jit.script(m)
    x = ember.ones(1, 2)
    y = sm(x).detach()
    sm(x)
    c = copy.deepcopy(sm)
    assert c.weight is c._orig.weight and c.weight is not m.weight
    assert c.code.startswith("# nothing captured yet")
    with ember.no_grad():
        c.weight.add_(1)
        expected = x @ c.weight.t() + c.bias
        assert ember.equal(sm(x), y) and ember.equal(c(x), expected) and ember.equal(c(x), expected)
        assert not ember.equal(expected, y)


def test_script_module_forward_and_backward_match_eager():
    ember.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    sm = jit.script(m)
    x = ember.randn(5, 3)
    grads = []
    for run in (m, sm, sm):
        m.zero_grad()
        out = run(x)
        out.sum().backward()
        grads.append((out.detach(), [p.grad.clone() for p in m.parameters()]))
    for out, g in grads[1:]:
        assert ember.equal(out, grads[0][0])
        assert all(ember.equal(a, b) for a, b in zip(g, grads[0][1]))
    assert sm.graph.nodes("backward")  # the backward replays too


def test_script_module_keys_on_training_flag():
    m = Branchy()
    sm = jit.script(m)
    x = ember.ones(1, 3)
    y = m.lin(x).detach()
    assert ember.equal(sm(x).detach(), y * 2) and ember.equal(sm(x).detach(), y * 2)
    sm.eval()
    assert m.training is False
    with ember.no_grad():
        assert ember.equal(sm(x), y * 3) and ember.equal(sm(x), y * 3)
    sm.train()
    assert ember.equal(sm(x).detach(), y * 2)


def test_script_method_keys_on_training_flag_and_copies_capture_anew():
    import copy

    m = Dropper()
    x = ember.zeros(2)
    assert m.code.startswith("# nothing captured yet")
    assert m(x).tolist() == [1.0, 1.0] and m(x).tolist() == [1.0, 1.0]
    assert m.graph.nodes() == ["add"]
    m.eval()
    assert m(x).tolist() == [-1.0, -1.0] and m(x).tolist() == [-1.0, -1.0]
    c = copy.deepcopy(m)
    assert c.code.startswith("# nothing captured yet") and c(x).tolist() == [-1.0, -1.0]


def test_compiler_reset_reaches_scripted_functions():
    s = jit.script(f)
    s(ember.ones(2), ember.ones(2))
    assert s.graph.nodes() == ["mul", "add"]
    ember.compiler.reset()
    assert s.code.startswith("# nothing captured yet")


# -- save / load ------------------------------------------------------------------------------
def test_save_load_round_trip(tmp_path):
    ember.manual_seed(1)
    m = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))
    m(ember.randn(4, 2, 2, 2))  # running stats differ from a fresh module's
    m.eval()
    sm = jit.script(m)
    path = tmp_path / "model.pt"
    jit.save(sm, path, _extra_files={"meta.txt": "hi"})
    assert os.listdir(tmp_path) == ["model.pt"]  # written atomically: no temporary left
    extra = {"meta.txt": ""}
    loaded = jit.load(str(path), _extra_files=extra)
    assert extra == {"meta.txt": b"hi"}
    assert isinstance(loaded, jit.RecursiveScriptModule) and loaded.training is False
    assert type(loaded._orig) is nn.Sequential and type(loaded._orig[1]) is nn.BatchNorm2d
    assert list(loaded.state_dict()) == list(m.state_dict())
    for (k, a), b in zip(m.state_dict().items(), loaded.state_dict().values()):
        assert ember.equal(a, b), k
    x = ember.randn(3, 2, 2, 2)
    with ember.no_grad():
        assert ember.equal(loaded(x), m(x)) and ember.equal(loaded(x), m(x))


def test_save_load_attributes_buffers_and_tied_weights():
    m = Stats()
    b = io.BytesIO()
    jit.save(jit.script(m), b)
    b.seek(0)
    loaded = jit.load(b)._orig
    assert type(loaded) is Stats and loaded.b.weight is loaded.a.weight
    assert loaded.tags == {"kind": ("x", 1, 2.5, None)} and loaded.dtype_ is ember.float64
    assert loaded.act is nn.functional.relu
    assert ember.equal(loaded.scale, ember.full((4,), 0.5)) and "scale" not in loaded.state_dict()
    assert ember.equal(loaded.shift, ember.full((4,), 0.25))
    x = ember.randn(2, 4)
    assert ember.equal(loaded(x), m(x))
    assert list(loaded.state_dict()) == list(m.state_dict())


def test_save_refuses_what_it_cannot_save(tmp_path):
    path = tmp_path / "m.pt"
    jit.save(jit.script(nn.Linear(1, 1)), path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match=r"cannot save attribute Holder\.fn of type function"):
        jit.save(jit.script(Holder()), path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["m.pt"]

    class Local(nn.Module):
        def forward(self, x):
            return x

    with pytest.raises(RuntimeError, match="cannot be imported by its path"):
        jit.save(jit.script(Local()), io.BytesIO())
    with pytest.raises(NotImplementedError, match="a scripted function cannot be saved"):
        jit.save(jit.script(f), io.BytesIO())
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'save'"):
        jit.save(nn.Linear(1, 1), io.BytesIO())


def test_load_errors(tmp_path):
    missing = tmp_path / "none.pt"
    with pytest.raises(ValueError, match=f"The provided filename {missing} does not exist"):
        jit.load(missing)
    with pytest.raises(ValueError, match="is a directory"):
        jit.load(tmp_path)
    plain = tmp_path / "plain.pt"
    ember.save(nn.Linear(1, 1).state_dict(), plain)
    with pytest.raises(RuntimeError, match="not a valid ember.jit.save archive.*load it with ember.load"):
        jit.load(plain)


def _crafted(tmp_path, edit):
    b = io.BytesIO()
    jit.save(jit.script(nn.Linear(1, 1)), b)
    b.seek(0)
    payload = ember.load(b)
    edit(payload)
    path = tmp_path / "crafted.pt"
    ember.save(payload, path)
    return path


def test_load_builds_only_module_classes(tmp_path):
    path = _crafted(tmp_path, lambda p: p["tree"].update({"class": "os.system"}))
    with pytest.raises(
        RuntimeError, match="names 'os.system' as a module class, which is not an ember.nn.Module"
    ):
        jit.load(path)
    path = _crafted(tmp_path, lambda p: p["tree"]["attrs"].update({"_forward_hooks": {}}))
    with pytest.raises(RuntimeError, match="attribute name '_forward_hooks' is not allowed"):
        jit.load(path)
    path = _crafted(tmp_path, lambda p: p["tree"].update({"params": [["weight"]]}))
    with pytest.raises(RuntimeError, match="not a valid ember.jit.save archive: a malformed module record"):
        jit.load(path)
    path = _crafted(tmp_path, lambda p: p["tree"]["attrs"].update({"f": {"__function__": "os.system"}}))
    with pytest.raises(RuntimeError, match="names 'os.system', which is not a function of ember"):
        jit.load(path)


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_load_runs_no_code_from_the_file(tmp_path):
    path = tmp_path / "evil.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("evil/data.pkl", pickle.dumps({"format": "ember.jit/1", "tree": _Boom()}, protocol=2))
        z.writestr("evil/version", "3\n")
    with pytest.raises(pickle.UnpicklingError):
        jit.load(path)


# -- the seeds' TorchScript examples (002_43ee9cb9487833c9.txt) --------------------------------
torch = ember  # the seeds' code, as written for ``import torch``


def batch_gather(tensor, indices):
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)


@torch.jit.script
def batch_gather_jit(tensor, indices):
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)


def batch_gather_vec(tensor, indices):
    shape = list(tensor.shape)
    flat_first = torch.reshape(tensor, [shape[0] * shape[1]] + shape[2:])
    offset = torch.reshape(torch.arange(shape[0]) * shape[1], [shape[0]] + [1] * (len(indices.shape) - 1))
    output = flat_first[indices + offset]
    return output


def test_seed_batch_gather():
    t = torch.arange(60.0).reshape(4, 5, 3)
    for idx in ([0, 4, 2, 1], [0, 4, 2, 1], [3, 3, 0, 4]):
        indices = torch.tensor(idx)
        expected = torch.stack([t[i, j] for i, j in enumerate(idx)])
        assert torch.equal(batch_gather(t, indices), expected)
        assert torch.equal(batch_gather_jit(t, indices), expected)
        assert torch.equal(batch_gather_vec(t, indices), expected)
    assert batch_gather_jit.graph.nodes()[-1] == "cat"


def grid(width, height):
    hrange = torch.arange(width).unsqueeze(0).repeat([height, 1]).div(width)
    vrange = torch.arange(height).unsqueeze(1).repeat([1, width]).div(height)
    output = torch.stack([hrange, vrange], 0)
    return output


def checker(width, height, freq):
    hrange = torch.arange(width).reshape([1, width]).mul(freq / width / 2.0).fmod(1.0).gt(0.5)
    vrange = torch.arange(height).reshape([height, 1]).mul(freq / height / 2.0).fmod(1.0).gt(0.5)
    output = hrange.logical_xor(vrange).float()
    return output


def _layers(c: int) -> nn.Sequential:  # the seed has 256 channels on 512x512: smaller here
    return torch.nn.Sequential(
        torch.nn.Conv2d(2, c, 1),
        torch.nn.BatchNorm2d(c),
        torch.nn.ReLU(),
        torch.nn.Conv2d(c, c, 1),
        torch.nn.BatchNorm2d(c),
        torch.nn.ReLU(),
        torch.nn.Conv2d(c, 1, 1),
    )


class Net(torch.jit.ScriptModule):
    def __init__(self):
        super().__init__()
        self.net = _layers(8)

    @torch.jit.script_method
    def forward(self, x):
        return self.net(x)


class EagerNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = _layers(8)

    def forward(self, x):
        return self.net(x)


def _train(net, amp: bool) -> list[float]:
    inputs = grid(8, 8).unsqueeze(0)
    targets = checker(8, 8, 4).unsqueeze(0).unsqueeze(1)
    loss_fn = torch.nn.MSELoss()
    opt = torch.optim.Adam(net.parameters(), 0.001)
    scaler = torch.amp.GradScaler("cpu")
    losses = []
    for _ in range(4):
        opt.zero_grad()
        if amp:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                outputs = net(inputs)
                loss = loss_fn(outputs, targets)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            outputs = net(inputs)
            loss = loss_fn(outputs, targets)
            loss.backward()
            opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("amp", [False, True])
def test_seed_script_module_trains_as_eager(amp):
    torch.manual_seed(0)
    net = Net()
    torch.manual_seed(0)
    eager = EagerNet()
    assert _train(net, amp) == _train(eager, amp)
    assert all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), eager.state_dict().values()))
    nodes = net.graph.nodes()
    assert nodes.count("conv2d") == 3 and net.explain() == []
    net.eval()
    x = grid(8, 8).unsqueeze(0)
    eager.eval()
    with torch.no_grad():
        assert torch.equal(net(x), eager(x)) and torch.equal(net(x), eager(x))


def test_seed_script_module_saves_and_loads(tmp_path):
    net = Net().eval()
    jit.save(net, tmp_path / "net.pt")
    loaded = jit.load(tmp_path / "net.pt")
    assert type(loaded) is Net and loaded.training is False
    x = grid(8, 8).unsqueeze(0)
    with torch.no_grad():
        assert torch.equal(loaded(x), net(x))
