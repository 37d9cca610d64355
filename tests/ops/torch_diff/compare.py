"""Differential check of ember against PyTorch: not part of the test run (ember's tests never
import torch). Each case script runs once under a PyTorch interpreter and once under ember's,
pickling results (values, dtypes, shapes or the exception type); this compares them.

    python tests/ops/torch_diff/compare.py /tmp/torchref3/bin/python

(``python3 -m venv /tmp/torchref3 && /tmp/torchref3/bin/pip install torch==2.13.0 numpy scipy``.)
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
SCRIPTS = ["values", "grads", "complex_grads", "dtypes", "more", "shapes", "errors", "fft_cases"]


def _same(a: object, b: object) -> str | None:
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)) or len(a) != len(b):
            return "output structure differs"
        return next((r for r in (_same(x, y) for x, y in zip(a, b)) if r), None)
    if a is None or b is None:
        return None if a is b else "gradient None on one side"
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return _arrays(np.asarray(a), np.asarray(b))
    if a[0] != b[0]:
        return f"{a[0]} vs {b[0]}: {a[1:] if a[0] != 'T' else a[1]} | {b[1:] if b[0] != 'T' else b[1]}"
    if a[0] == "E":
        return None if a[1] == b[1] else f"exception {a[1]} vs {b[1]}"
    if a[0] == "P":
        return None if a[1] == b[1] else f"{a[1]} vs {b[1]}"
    if a[1] != b[1]:
        return f"dtype {a[1]} vs {b[1]}"
    return _arrays(a[2], b[2], 1e-2 if a[1] in ("float16", "bfloat16") else 2e-5)


def _arrays(x: np.ndarray, y: np.ndarray, tol: float = 1e-6) -> str | None:
    if x.shape != y.shape:
        return f"shape {x.shape} vs {y.shape}"
    if x.dtype.kind in "fc":
        ok = np.allclose(x, y.astype(x.dtype), rtol=tol, atol=tol, equal_nan=True)
    else:
        ok = np.array_equal(x, y)
    return None if ok else f"values {x.ravel()[:6]} vs {y.ravel()[:6]}"


def main(torch_python: str) -> int:
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in SCRIPTS:
            outs = {}
            for who, exe in (("torch", torch_python), ("ember", sys.executable)):
                out = Path(tmp) / f"{name}_{who}.pkl"
                subprocess.run([exe, "-W", "ignore", str(HERE / f"{name}.py"), who, str(out)], check=True)
                outs[who] = pickle.loads(out.read_bytes())
            for case, ref in outs["torch"].items():
                got = outs["ember"].get(case)
                if isinstance(ref, list) and all(isinstance(r, np.ndarray) or r is None for r in ref):
                    why = _same(list(ref), got) if isinstance(got, list) else f"ember: {got}"
                else:
                    why = _same(ref, got)
                if why:
                    bad += 1
                    print(f"{name}:{case}: {why}")
            print(f"{name}: {len(outs['torch'])} cases")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/torchref3/bin/python"))
