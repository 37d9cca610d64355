"""The frontend's layers, read from the source with ``ast``: imports point one way.

contract (``ember.backends``) <- dispatch <- tensor core <- ops <- API (autograd, nn, optim,
linalg, ...) <- cli. A module-level import from a lower layer into a higher one fails, and so
does a cycle in the module-level import graph. Function-level imports are not edges: each one
that breaks a cycle on purpose says which with a ``# cycle: <module>`` comment. Imports under
``if TYPE_CHECKING:`` never run and are not edges either. Only the named module counts, not the
packages above it (whose ``__init__`` Python also runs).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"
BACKENDS = ROOT / "backends"

LAYERS = ("contract", "dispatch", "tensor core", "ops", "api", "cli")

# First match wins; a module matches a pattern that is its name or a dotted prefix of it.
_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("cli", ("cli", "demo", "_gen_api")),
    (
        "tensor core",
        (
            "_tensor",
            "_tensor_api",
            "_public",
            "_dtype",
            "_device",
            "_state",
            "autograd.grad_mode",
            "autograd.graph",
            "autograd.anomaly",
        ),
    ),
    ("dispatch", ("_dispatch", "_autocast_hook", "_op_trace")),
    (
        "ops",
        (
            "_ops",
            "_creation",
            "_random",
            "_random_inplace",
            "_decomp_bessel",
            "_decomp_eig",
            "_decomp_elementary",
            "_decomp_gamma",
            "_decomp_jacobi",
            "_decomp_linalg",
            "_decomp_normal",
            "_decomp_scatter",
            "_decompositions",
            "_special_bessel",
            "_methods",
            "_legacy",
            "_misc",
            "_dtype_info",
            "_kernel_check",
        ),
    ),
    (
        "api",
        (
            "",  # the ``ember`` package itself: the facade over everything below
            "_namespace",
            "autograd",
            "nn",
            "optim",
            "utils",
            "linalg",
            "fft",
            "special",
            "serialization",
            "_checkpoint_rebuild",
            "_checkpoint_zip",
            "_unpickler",
            "_safetensors",
            "_atomic_save",
            "_safe_globals",
            "_printing",
            "testing",
            "accelerator",
            "cuda",
            "amp",
            "profiler",
            "jit",
            "onnx",
            "distributed",
            "distributions",
            "func",
            "compiler",
        ),
    ),
)

# Module-level imports that break the rules today: (importer, imported) -> why. Keep small;
# each is left out of both checks. "" is the ``ember`` package itself.
ALLOWED: dict[tuple[str, str], str] = {
    # ``import ember as E`` at module level, names looked up when called: a cycle with
    # ``ember/__init__`` (which imports nn). Fix: import the few functions each one uses.
    ("nn._functional.ctc", ""): "ember <-> nn",
    ("nn.utils._norm_hooks", ""): "ember <-> nn",
    ("nn.utils.parametrizations", ""): "ember <-> nn",
}


def _name(path: Path) -> str:
    parts = list(path.relative_to(CORE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_name(p): p for p in sorted(CORE.rglob("*.py"))}


def layer(module: str) -> str | None:
    """The layer of ``module`` (a name relative to ``ember``), or None when no rule names it."""
    for name, patterns in _RULES:
        for pat in patterns:
            if module == pat or (pat and module.startswith(pat + ".")):
                return name
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []
    for s in body:
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            out.append(s)
        elif isinstance(s, ast.If) and not _is_type_checking(s.test):
            out += _module_level_imports(s.body) + _module_level_imports(s.orelse)
        elif isinstance(s, ast.Try):
            out += _module_level_imports(s.body + s.orelse + s.finalbody)
            for h in s.handlers:
                out += _module_level_imports(h.body)
        elif isinstance(s, ast.With):
            out += _module_level_imports(s.body)
    return out


def _absolute(module: str, node: ast.ImportFrom) -> str:
    package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
    if module == "":
        package = []
    base = package[: len(package) - (node.level - 1)] if node.level else []
    rel = ".".join(base + ([node.module] if node.module else []))
    if node.level:
        return "ember" + ("." + rel if rel else "")
    return node.module or ""


def imports_of(module: str) -> set[str]:
    """ember modules that ``module`` imports at module level (names relative to ``ember``;
    ``backends...`` for the contract)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in _module_level_imports(tree.body):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            full = _absolute(module, node)
            targets = [f"{full}.{a.name}" for a in node.names] + [full]
        for t in targets:
            if t == "ember" or t.startswith("ember."):
                rel = t[len("ember.") :] if t != "ember" else ""
                if rel in MODULES or rel.startswith("backends"):
                    found.add(rel)
        if isinstance(node, ast.ImportFrom):
            # ``from pkg import submodule`` imports the submodule, not (only) the package.
            full = _absolute(module, node)
            subs = {f"{full}.{a.name}"[len("ember.") :] for a in node.names}
            if subs & MODULES.keys() and all(s in MODULES for s in subs):
                found.discard(full[len("ember.") :] if full != "ember" else "")
    found.discard(module)
    return found


GRAPH = {m: {d for d in imports_of(m) if (m, d) not in ALLOWED} for m in MODULES}


def _rank(module: str) -> int:
    if module.startswith("backends"):
        return 0
    return LAYERS.index(layer(module) or "")


def test_every_allowed_exception_still_exists() -> None:
    stale = sorted(k for k in ALLOWED if k[1] not in imports_of(k[0]))
    assert not stale, f"remove these from ALLOWED, the imports are gone: {stale}"


def test_every_module_has_a_layer() -> None:
    missing = sorted(m or "ember" for m in MODULES if layer(m) is None)
    assert not missing, f"give these modules a layer in tests/test_layers.py _RULES: {missing}"


def test_module_level_imports_point_down_the_layers() -> None:
    upward = []
    for m, deps in GRAPH.items():
        for d in deps:
            if _rank(d) > _rank(m):
                upward.append(f"ember.{m} ({layer(m)}) imports ember.{d} ({layer(d)})")
    assert not upward, "upward imports:\n" + "\n".join(sorted(upward))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_the_module_level_import_graph_has_no_cycle() -> None:
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles: " + "; ".join(
        " <-> ".join("ember." + m if m else "ember" for m in c) for c in cycles
    )


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_layer_rules_place_known_modules() -> None:
    assert layer("_tensor") == "tensor core"
    assert layer("_ops.pointwise_binary") == "ops"
    assert layer("autograd.graph") == "tensor core"
    assert layer("autograd.engine") == "api"
    assert layer("nn.modules.linear") == "api"
    assert layer("cli") == "cli"
    assert layer("_opsx") is None


def test_the_contract_imports_no_frontend_module() -> None:
    bad = []
    for path in sorted(BACKENDS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            bad += [
                f"{path.relative_to(ROOT)}: {n}" for n in names if re.match(r"ember(\.|$)(?!backends)", n)
            ]
    assert not bad, bad


def test_function_level_imports_in_ops_say_which_cycle_they_break() -> None:
    """Under ``core/_ops`` an import inside a function is there only to break a cycle."""
    bare = []
    for path in sorted((CORE / "_ops").glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if (
                    isinstance(node, (ast.Import, ast.ImportFrom))
                    and "# cycle: " not in lines[node.end_lineno - 1]
                ):
                    bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bare, "move to module level, or comment '# cycle: <module>': " + ", ".join(sorted(set(bare)))
