"""Run an ordinary PyTorch program with ``torch`` resolving to ember or to PyTorch.

``python programs/run.py --framework ember SCRIPT`` installs an import alias first, so the
script's ``import torch``, ``import torch.nn as nn``, ``from torch.utils.data import ...`` and
``torch.serialization`` get ember's modules without a line of the script changing; with
``--framework torch`` the script runs as written. The script runs as ``__main__`` (so classes
it defines pickle as they would under ``python SCRIPT``) and prints to this process's stdout.
Several scripts run one after another in this process (imports paid once), each announced by a
``==> SCRIPT`` line; a failing one prints ``==! SCRIPT failed: ...``, its traceback goes to
stderr, the rest still run and the exit status is 1.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import runpy
import sys
import traceback
from types import ModuleType

ALIAS = "torch"
TARGET = "ember"


class _AliasLoader(importlib.abc.Loader):
    """Hands back ember's own module object, so ``torch.nn is ember.nn``."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.original_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.original_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the alias's spec on ember's module; put ember's back.
        module.__spec__ = self.original_spec


class TorchAlias(importlib.abc.MetaPathFinder):
    """Finds ``torch`` and ``torch.<sub>`` as ``ember`` and ``ember.<sub>``."""

    def find_spec(self, fullname: str, path: object = None, target: object = None):
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real = TARGET + fullname[len(ALIAS) :]
        if importlib.util.find_spec(real) is None:
            # Never fall through to an installed PyTorch: the run must be ember's or fail.
            raise ModuleNotFoundError(f"No module named {fullname!r} (ember has no {real!r})", name=fullname)
        is_package = hasattr(importlib.import_module(real), "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(real), is_package=is_package)


def install_alias() -> None:
    """Make ``import torch`` (and its submodules) import ember."""
    if any(isinstance(f, TorchAlias) for f in sys.meta_path):
        return
    for name in [m for m in sys.modules if m == ALIAS or m.startswith(ALIAS + ".")]:
        del sys.modules[name]
    sys.meta_path.insert(0, TorchAlias())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=["ember", "torch"], required=True)
    parser.add_argument("scripts", nargs="+", metavar="SCRIPT")
    args = parser.parse_args(argv)
    if args.framework == "ember":
        install_alias()
    status = 0
    for script in args.scripts:
        print(f"==> {script}", flush=True)
        sys.argv = [script]
        try:
            runpy.run_path(script, run_name="__main__")
        except Exception as e:  # noqa: BLE001 -- report it and run the next program
            traceback.print_exc()
            print(f"==! {script} failed: {type(e).__name__}: {e}".splitlines()[0], flush=True)
            status = 1
        sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
