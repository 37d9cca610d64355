"""``ember demo --compile``: the compiled training step gives the eager run's numbers exactly."""

from __future__ import annotations

import ember
import pytest
from ember import cli, demo

pytest.importorskip("sklearn")


def _epoch_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("epoch ", "reloaded model"))]


def test_demo_compile_trains_to_the_same_accuracy(tmp_path, capsys) -> None:
    assert demo.main(["--epochs", "2", "--checkpoint", str(tmp_path / "eager.pt")]) == 0
    eager = capsys.readouterr().out
    assert demo.main(["--epochs", "2", "--checkpoint", str(tmp_path / "compiled.pt"), "--compile"]) == 0
    compiled = capsys.readouterr().out
    assert "training step compiled (ember.compile)" in compiled
    assert "compiled" not in eager.splitlines()[0]
    # CPU replay runs the eager kernels in the same order: losses and accuracies match to the digit.
    assert len(_epoch_lines(eager)) == 3
    assert _epoch_lines(compiled) == _epoch_lines(eager)
    a = ember.load(str(tmp_path / "eager.pt"))
    b = ember.load(str(tmp_path / "compiled.pt"))
    assert list(a) == list(b)
    for name in a:
        assert ember.equal(a[name], b[name]), name


def test_compiled_step_replays_instead_of_running_the_model() -> None:
    ember.manual_seed(0)
    model = demo.build_model()
    forwards = []
    model.register_forward_pre_hook(lambda m, args: forwards.append(1))
    opt = ember.optim.Adam(model.parameters(), lr=3e-3)
    step = demo.make_step(model, opt, compiled=True)
    ember.manual_seed(0)
    twin = demo.build_model()
    eager = demo.make_step(twin, ember.optim.Adam(twin.parameters(), lr=3e-3))
    x, y = ember.rand(8, 1, 8, 8), ember.randint(0, 10, (8,))
    for _ in range(5):
        assert step(x, y).item() == eager(x, y).item()
    # Eager warm-up calls, then one capture; the calls after it replay (no module call).
    assert len(forwards) == ember.compiler.config.warmup + 1 < 5
    assert step.explain() == []
    for p, q in zip(model.parameters(), twin.parameters(), strict=True):
        assert ember.equal(p, q)


def test_cli_accepts_the_compile_flag(capsys) -> None:
    assert cli.main(["demo", "--compile", "--device", "nosuch"]) == 2  # parsed, then the device check
    assert "cannot use device 'nosuch'" in capsys.readouterr().err


def test_compiled_mixed_precision_step_matches_eager() -> None:
    """``--amp --compile``: autocast inside the step, the GradScaler's step and update eager."""
    runs = []
    for compiled in (False, True):
        ember.manual_seed(0)
        model = demo.build_model()
        opt = ember.optim.Adam(model.parameters(), lr=3e-3)
        step = demo.make_step(model, opt, ember.amp.GradScaler("cpu"), compiled=compiled)
        gen = ember.Generator().manual_seed(1)
        losses = [
            step(ember.rand(8, 1, 8, 8, generator=gen), ember.randint(0, 10, (8,), generator=gen)).item()
            for _ in range(4)
        ]
        runs.append((losses, [p.detach().clone() for p in model.parameters()]))
        if compiled:
            assert step.explain() == []
    (eager_losses, eager_params), (losses, params) = runs
    assert losses == eager_losses
    for p, q in zip(params, eager_params, strict=True):
        assert ember.equal(p, q)
