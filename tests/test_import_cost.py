"""What ``import ember`` and its first op leave out, and that each left-out part still loads
when it is needed: the layer classes, ``nn.functional``, the standalone decompositions and
``importlib.metadata``. Each check runs in a fresh interpreter (this one has imported
everything). No timings: which modules load is what decides the cost.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(code: str, path: list[str] | None = None) -> Any:
    """Run ``code`` in a fresh interpreter; return what it prints as JSON on its last line."""
    env = dict(os.environ)
    env.pop("EMBER_DEVICE", None)  # the first op is the CPU's
    if path:
        env["PYTHONPATH"] = os.pathsep.join([*path, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_and_first_op_leave_out_the_rarely_used_parts() -> None:
    loaded = _run(
        """
        import json, sys
        import ember
        ember.ones(3) + 1
        print(json.dumps(sorted(sys.modules)))
        """
    )
    decompositions = {
        "ember._decomp_bessel",
        "ember._decomp_eig",
        "ember._decomp_elementary",
        "ember._decomp_gamma",
        "ember._decomp_jacobi",
        "ember._decomp_linalg",
        "ember._decomp_normal",
        "ember._decomp_scatter",
    }
    layers = {
        "ember.nn.modules.activation",
        "ember.nn.modules.container",
        "ember.nn.modules.linear",
        "ember.nn.modules.module",
        "ember.nn.modules.rnn",
        "ember.nn.modules.transformer",
    }
    rest = {
        "ember.nn.functional",
        "ember.nn.init",
        "ember.nn.utils",
        "ember.nn.parallel",
        "importlib.metadata",
        "ember.optim",
        "ember.utils",
        "ember.fft",
        "ember.testing",
    }
    assert sorted((decompositions | layers | rest) & set(loaded)) == []
    assert "ember.nn.parameter" in loaded  # checkpoints rebuild Parameters


def test_nn_names_load_on_first_use_as_the_same_objects() -> None:
    got = _run(
        """
        import json
        import ember
        from ember import nn
        from ember.nn import LSTM, Module
        from ember.nn.modules.linear import Linear
        from ember.nn.modules import *  # noqa: F403
        layer = nn.Linear(2, 3)
        print(json.dumps([
            nn.Linear is Linear,
            nn.modules.Linear is Linear,
            isinstance(layer, Module),
            LSTM.__module__,
            nn.functional.relu is ember.nn.functional.relu,
            callable(nn.init.zeros_),
            nn.utils.clip_grad_norm_.__name__,
            nn.parallel.DataParallel is nn.DataParallel,
            nn.Parameter is ember.nn.parameter.Parameter,
            all(name in dir(nn) for name in nn.__all__),
            sorted(set(nn.modules.__all__) - set(globals())),
        ]))
        """
    )
    assert got == [
        True,
        True,
        True,
        "ember.nn.modules.rnn",
        True,
        True,
        "clip_grad_norm_",
        True,
        True,
        True,
        [],
    ]


def test_an_unknown_nn_name_is_an_attribute_error() -> None:
    got = _run(
        """
        import json
        import ember
        out = []
        for module in (ember.nn, ember.nn.modules):
            try:
                module.Linearr
            except AttributeError as e:
                out.append(str(e))
        print(json.dumps(out))
        """
    )
    assert got == [
        "module 'ember.nn' has no attribute 'Linearr'",
        "module 'ember.nn.modules' has no attribute 'Linearr'",
    ]


def test_a_backend_without_the_composites_loads_their_decompositions() -> None:
    got = _run(
        """
        import json, sys
        import ember
        from ember.backends import PRIMITIVES, registry
        from ember_cpu.kernels import KERNELS
        from fixtures.limited_backends import register

        before = sorted(m for m in sys.modules if m.startswith("ember._decomp_"))
        name = register("prims_probe", {op: fn for op, fn in KERNELS.items() if op in PRIMITIVES})
        after = sorted(m for m in sys.modules if m.startswith("ember._decomp_"))
        x = ember.tensor([0.5, 2.0], dtype=ember.float64, device=name)
        print(json.dumps([before, after, registry.get(name).composite_fallbacks(),
                          ember.special.i0(x).cpu().tolist()]))
        """,
        path=[str(ROOT / "tests")],
    )
    before, after, fallbacks, i0 = got
    assert before == []
    assert after == [
        "ember._decomp_bessel",
        "ember._decomp_eig",
        "ember._decomp_elementary",
        "ember._decomp_gamma",
        "ember._decomp_jacobi",
        "ember._decomp_linalg",
        "ember._decomp_normal",
        "ember._decomp_scatter",
    ]
    assert fallbacks == []
    assert i0 == pytest.approx([1.0634833707413236, 2.2795853023360673], rel=1e-15)  # scipy's i0


def test_each_listed_module_registers_the_decompositions_listed_for_it() -> None:
    got = _run(
        """
        import importlib, json
        import ember
        from ember._decompositions import INLINE, MODULES
        from ember._ops._composite import DECOMPOSITIONS
        from ember.backends import registry

        declared = sorted(registry.decomposed())
        missing = {}
        for module, ops in MODULES.items():
            importlib.import_module(module)
            missing[module] = sorted(set(ops) - set(DECOMPOSITIONS))
        listed = sorted(op for ops in MODULES.values() for op in ops)
        print(json.dumps([declared, sorted(registry.decomposed()), listed, sorted(DECOMPOSITIONS),
                          sorted(INLINE), missing]))
        """
    )
    declared, after, listed, registered, inline, missing = got
    assert after == declared  # importing the modules declares nothing new
    assert listed == registered  # the table lists every registration, and only those
    assert sorted(listed + inline) == declared
    assert all(ops == [] for ops in missing.values()), missing


def test_discovery_reads_what_importlib_metadata_reads(tmp_path: Path) -> None:
    """A distribution installed after ember (a new folder on the path) is found, with its
    distribution name, and in importlib.metadata's order."""
    info = tmp_path / "Ember_Probe-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ember-probe\nVersion: 1.0\n\nName: not this\n"
    )
    (info / "entry_points.txt").write_text(
        "# comment\n[console_scripts]\nprobe = x:y\n\n[ember.backends]\nprobe = ember_probe.plugin:make.plugin\n"
    )
    got = _run(
        """
        import json
        from importlib import metadata
        from ember.backends import _entry_points

        ours = _entry_points._scan("ember.backends")
        theirs = _entry_points._from_importlib("ember.backends")
        probe = [list(ep) for ep in ours if ep.name == "probe"]
        print(json.dumps([ours == theirs, probe, len(ours) > 1]))
        """,
        path=[str(tmp_path)],
    )
    assert got == [True, [["probe", "ember_probe.plugin:make.plugin", "ember.backends", "ember-probe"]], True]


def test_an_entry_point_loads_its_dotted_attribute(tmp_path: Path) -> None:
    (tmp_path / "ember_probe_mod.py").write_text("class make:\n    plugin = 'the plugin'\n")
    got = _run(
        """
        import json
        from ember.backends._entry_points import EntryPoint

        ep = EntryPoint("probe", "ember_probe_mod : make.plugin [extra]", "ember.backends", None)
        print(json.dumps(ep.load()))
        """,
        path=[str(tmp_path)],
    )
    assert got == "the plugin"
