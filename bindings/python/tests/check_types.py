"""check_types.py: `mypy --strict` over examples/python/*.py, tests/test_typed_usage.py (the whole
API in typed use) and the polygpu stubs (bindings/python/polygpu/*.pyi), as a user's type
checker sees the installed package (PEP 561: py.typed). Run by CTest as `python_types`; fails
on any error.

    python3 bindings/python/tests/check_types.py [--cache-dir DIR]

MYPYPATH points at bindings/python, so the stubs of this checkout are used whatever polygpu is
installed. mypy comes from scripts/install-deps.sh (Debian's python3-mypy or pip's mypy).

One allowance: a mypy whose typeshed predates PEP 688 (the buffer protocol in types, mypy
1.5; Debian 12 ships mypy 1.0) cannot accept any third-party object in memoryview(), whatever
its stub says. With such a mypy only that one error, on DeviceArray or HostView, is
forgiven, and the output says so.
"""

import argparse
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.dirname(HERE)  # bindings/python: holds polygpu/
ROOT = os.path.dirname(os.path.dirname(PACKAGE_ROOT))

PRE_PEP688 = re.compile(r'error: Argument 1 to "memoryview" has incompatible type '
                        r'"(DeviceArray|HostView)"')


def typeshed_has_buffer_protocol():
    import mypy

    path = os.path.join(os.path.dirname(mypy.__file__), "typeshed", "stdlib", "_typeshed",
                        "__init__.pyi")
    try:
        with open(path, encoding="utf-8") as f:
            return "ReadableBuffer: TypeAlias = Buffer" in f.read()
    except OSError:
        return True  # no bundled typeshed to read: assume a current one


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", default=os.devnull,
                        help="mypy's incremental cache (default: none)")
    args = parser.parse_args()
    try:
        import mypy.version
    except ImportError:
        print("check_types: mypy is not installed for %s; scripts/install-deps.sh installs it "
              "(apt-get install python3-mypy, or pip install mypy)" % sys.executable)
        return 1
    examples = sorted(glob.glob(os.path.join(ROOT, "examples", "python", "*.py")))
    usage = os.path.join(HERE, "test_typed_usage.py")
    stubs = os.path.join(PACKAGE_ROOT, "polygpu")
    if not examples or not glob.glob(os.path.join(stubs, "*.pyi")):
        print("check_types: no examples or no stubs found under %s" % ROOT)
        return 1
    env = dict(os.environ, MYPYPATH=PACKAGE_ROOT)
    env.pop("PYTHONPATH", None)  # the stubs come from MYPYPATH, not from a build tree
    cmd = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", args.cache_dir,
           "--no-error-summary", "--show-error-codes", stubs, usage] + examples
    print("mypy %s: %s" % (mypy.version.__version__, " ".join(cmd[3:])))
    sys.stdout.flush()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    old = not typeshed_has_buffer_protocol()
    errors = forgiven = 0
    for line in proc.stdout.splitlines():
        if old and PRE_PEP688.search(line):
            forgiven += 1
            print("(forgiven: this mypy predates PEP 688) " + line)
            continue
        errors += ": error:" in line
        print(line)
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and errors == 0 and not forgiven):
        print("check_types: mypy failed (exit status %d)" % proc.returncode)
        return 1
    checked = "%d examples, test_typed_usage.py and %d stub files" % (
        len(examples), len(glob.glob(os.path.join(stubs, "*.pyi"))))
    if errors:
        print("check_types: %d error%s in %s" % (errors, "" if errors == 1 else "s", checked))
        return 1
    print("check_types: mypy --strict found no errors in %s%s" % (
        checked, " (%d forgiven, see above)" % forgiven if forgiven else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
