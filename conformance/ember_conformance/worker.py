"""The worker process: runs groups of cases for pytest and streams verdicts back.

Every kernel call of the suite happens here, never in the pytest process, so a kernel that
segfaults or calls ``os._exit`` kills only the worker; the pool reports the case it was
running as ``crash`` and starts a new worker that resumes after it.

Protocol (one JSON object a line): pytest writes ``{"kind", "group", "dtypes", "skip"}``;
the worker answers ``start`` before each case, ``result`` after it, then ``done``. Lines
carry a prefix because kernels may print to stdout (which is sent to stderr anyway).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import sys
import warnings
from typing import Any, TextIO

PREFIX = "@@ember-conformance@@ "


def _send(out: TextIO, msg: dict[str, Any]) -> None:
    out.write(PREFIX + json.dumps(msg) + "\n")
    out.flush()


def _serve(proto: TextIO, args: argparse.Namespace) -> None:
    import ember.backends as eb

    from .checks import Ctx
    from .groups import group_cases
    from .loading import load_backend

    eb.set_fallback_policy("silent")
    lb = load_backend(args.backend, args.plugin)
    _send(proto, {"ready": True})
    for line in sys.stdin:
        req = json.loads(line)
        ctx = Ctx(lb, req["dtypes"], args.index)
        skip = set(req.get("skip", ()))
        for cid, thunk in group_cases(ctx, req["kind"], req["group"]):
            if cid in skip:
                continue
            _send(proto, {"start": cid})
            _send(proto, {"result": cid, **thunk()})
        _send(proto, {"done": True})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m ember_conformance.worker")
    p.add_argument("--backend", required=True)
    p.add_argument("--index", type=int, default=0)
    p.add_argument("--plugin", default=None)
    args = p.parse_args(argv)
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # stray prints from kernels go to stderr, not into the protocol
    faulthandler.enable()  # a segfault leaves its Python traceback in our stderr
    warnings.simplefilter("ignore")
    _serve(proto, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
