#!/usr/bin/env bash
# One command for a lent GPU machine (the H200 image: CuPy 14 for CUDA 13, pytest, no
# network): install ember, ember-cpu, ember-cuda and ember-conformance from this tree
# without fetching anything, then run the CUDA backend's GPU tests, the conformance
# suite on `cuda`, and bench/bench_cuda.py. Into $OUT (default ./gpu_out) go six files:
# gpu_check.log (every step's output), test_gpu.xml, report.{md,json,xml}, bench_cuda.json.
# Each step has its own timeout; together at most 435 s, under the 8-minute budget.
#   usage: OUT=/some/dir bash bench/gpu_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu_out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY="${PYTHON:-python3}"
status=0
LOG="$OUT/gpu_check.log"
: >"$LOG"
step() {  # step NAME SECONDS CMD...: run with a timeout, append to $LOG, remember failures
  local name=$1 secs=$2
  shift 2
  echo "== $name (limit ${secs}s)" | tee -a "$LOG"
  timeout "$secs" "$@" 2>&1 | tee -a "$LOG" | tail -n 25
  local rc=${PIPESTATUS[0]}
  echo "== $name: exit $rc" | tee -a "$LOG"
  [ "$rc" -eq 0 ] || status=1
}

# --no-deps: the image's CuPy is cupy-cuda13x, ember-cuda names cupy-cuda12x, and nothing
# can be downloaded there; numpy, pluggy, ml_dtypes, scipy and pytest are in the image.
step install 60 "$PY" -m pip install -q --no-deps --no-build-isolation \
  -e . -e ./backend_cpu -e ./backend_cuda -e ./conformance
step device 20 "$PY" -c "import cupy, ember; from ember.backends import get; print(get('cuda').backend.device_name(0), cupy.__version__)"
step compile 45 "$PY" -m pytest -q -p no:cacheprovider backend_cuda/tests/test_compile.py
step gpu_tests 100 "$PY" -m pytest -q -p no:cacheprovider --junitxml="$OUT/test_gpu.xml" backend_cuda/tests/test_gpu.py backend_cuda/tests/test_rnn_attention.py
step conformance 150 "$PY" -m pytest -q -p no:cacheprovider --pyargs ember_conformance \
  --ember-backend cuda --ember-report "$OUT/report"
step bench 60 "$PY" bench/bench_cuda.py --out "$OUT/bench_cuda.json"
exit "$status"
