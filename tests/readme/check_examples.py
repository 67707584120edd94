#!/usr/bin/env python3
"""check_examples.py: every example picks its devices by the README's rule — every GPU when
there is one, else four CPU devices (host:4) — when PG_DEVICES is not set. Each example is run
as its header says, from the top of the checkout, and the devices it prints are counted.

    check_examples.py SOURCE_DIR BUILD_DIR [--lua EXE] [--java EXE]

Prints one line per example and "N passed, N failed".
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile


def expected_devices(build):
    """How many devices the rule gives on this machine: the GPUs, else 4."""
    code = ("import polygpu as pg\n"
            "try:\n"
            "    print(len(pg.Runtime(devices='cuda').devices))\n"
            "except pg.DeviceError:\n"
            "    print(4)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "bindings", "python"))
    env.pop("PG_DEVICES", None)
    return int(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, check=True).stdout.split()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("build")
    ap.add_argument("--lua")
    ap.add_argument("--java")
    args = ap.parse_args()
    src, build = os.path.abspath(args.source), os.path.abspath(args.build)
    want = expected_devices(build)
    out = tempfile.mkdtemp(prefix="pg-examples-")
    py = os.path.join(src, "examples", "python")
    env = dict(os.environ, PG_CACHE_DIR=os.path.join(build, "kernel-cache"),
               PYTHONPATH=os.path.join(build, "bindings", "python"), PYTHONDONTWRITEBYTECODE="1",
               LUA_CPATH=os.path.join(build, "bindings", "lua", "?.so"),
               PG_DEMO_DOT=os.path.join(out, "demo.dot"))
    env.pop("PG_DEVICES", None)
    runs = [
        ("examples/python/quickstart.py", [sys.executable, os.path.join(py, "quickstart.py")]),
        ("examples/python/dag_and_trace.py",
         [sys.executable, os.path.join(py, "dag_and_trace.py"), out]),
        ("examples/python/numpy_interop.py", [sys.executable, os.path.join(py, "numpy_interop.py")]),
        ("examples/c/demo.c", [os.path.join(build, "examples", "c", "polygpu-demo"),
                               os.path.join(out, "dag.dot")]),
    ]
    if args.lua:
        runs.append(("examples/lua/quickstart.lua",
                     [args.lua, os.path.join(src, "examples", "lua", "quickstart.lua")]))
    else:
        print("not run examples/lua/quickstart.lua: the Lua binding is not built")
    if args.java:
        runs.append(("examples/java/Quickstart.java",
                     [args.java, "-cp", os.path.join(build, "bindings", "java", "polygpu-bundle.jar"),
                      os.path.join(src, "examples", "java", "Quickstart.java")]))
    else:
        print("not run examples/java/Quickstart.java: the Java binding is not built")
    passed = failed = 0
    for name, cmd in runs:
        p = subprocess.run(cmd, env=env, cwd=out, capture_output=True, text=True, timeout=600)
        ids = re.findall(r"^device (\d+):", p.stdout, re.M)
        if p.returncode or len(ids) != want:
            failed += 1
            print("FAIL %s: exit status %d, %d device(s) listed, the rule gives %d (GPUs, else "
                  "host:4)" % (name, p.returncode, len(ids), want))
            print("  " + (p.stdout + p.stderr).strip().replace("\n", "\n  "))
        else:
            passed += 1
            print("ok   %s: %d devices" % (name, want))
        first = p.stdout.split("\n", 1)[0]
        if len(first) > 100:  # a first line the width of a screen or more hides what follows
            failed += 1
            print("FAIL %s: its first line is %d characters: %s" % (name, len(first), first))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
