#!/usr/bin/env bash
# pip_venv.sh SOURCE VENV PYTHON: the README's `pip install ./bindings/python` in a fresh virtual
# environment (pip builds in isolation, with setuptools and wheel from PyPI), then polygpu used
# from a folder outside the checkout.
set -euo pipefail
src=$1 venv=$2 py=$3
rm -rf "$venv"
"$py" -m venv "$venv"
cd "$src"
"$venv/bin/python" -m pip install -q --disable-pip-version-check ./bindings/python
cd "$(mktemp -d)"
PG_CACHE_DIR="$venv/kernel-cache" "$venv/bin/python" - <<'PY'
import polygpu as pg
rt = pg.Runtime(devices="host:2")
k = rt.kernel('extern "C" __global__ void add1(float *y, const float *x, int n) {'
              ' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1.0f; }',
              "add1")
x, y = rt.asarray([1.0, 2.0, 3.0], dtype="float32"), rt.array("float32", 3)
k(1, 32)(y, x, 3)
assert list(y) == [2.0, 3.0, 4.0], list(y)
print("pip-installed polygpu", pg.__version__, "ran a kernel:", list(y))
PY
echo "1 passed, 0 failed"
