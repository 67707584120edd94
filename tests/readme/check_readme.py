#!/usr/bin/env python3
"""check_readme.py: every fenced block of README.md marked `run` (```python run, ```lua run,
```java run, ```c run) is written to a file and run against the build, as the README tells a
user to, and its standard output must equal the ```text output block that follows it.

    check_readme.py SOURCE_DIR BUILD_DIR [--lua EXE] [--java EXE] [--cc EXE] [--not-built LANG]...

A language whose binding this build does not have (--not-built, from CMake's configuration) is
reported and not run; a runnable block in any other language whose tool is missing fails.
Prints one line per block and "N passed, N failed".
"""

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\S*)(?:[ \t]+(\S+))?[ \t]*$")


def blocks(text):
    """(info, tag, body, line) of every fenced block, in order."""
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group(1):
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append((m.group(1), m.group(2), "\n".join(body) + "\n", start))
        i += 1
    return out


def runnable(text):
    """(language, code, expected output, line) of each `run` block and its output block."""
    bs, found = blocks(text), []
    for j, (lang, tag, body, line) in enumerate(bs):
        if tag != "run":
            continue
        if j + 1 >= len(bs) or bs[j + 1][:2] != ("text", "output"):
            raise SystemExit("README.md:%d: a `%s run` block must be followed by a ```text "
                             "output block with what it prints" % (line, lang))
        found.append((lang, body, bs[j + 1][2], line))
    return found


def run(lang, code, work, args):
    """The block's standard output (and the command's status and stderr)."""
    env = dict(os.environ, PG_CACHE_DIR=os.path.join(args.build, "kernel-cache"))
    env.pop("PG_DEVICES", None)
    if lang == "python":
        path = os.path.join(work, "quickstart.py")
        cmd = [sys.executable, path]
        env["PYTHONPATH"] = os.path.join(args.build, "bindings", "python")
    elif lang == "lua":
        path = os.path.join(work, "quickstart.lua")
        cmd = [args.lua, path]
        env["LUA_CPATH"] = os.path.join(args.build, "bindings", "lua", "?.so")
    elif lang == "java":
        cls = re.search(r"public\s+(?:final\s+)?class\s+(\w+)", code)
        path = os.path.join(work, (cls.group(1) if cls else "Main") + ".java")
        cmd = [args.java, "-cp", os.path.join(args.build, "bindings", "java",
                                              "polygpu-bundle.jar"), path]
    elif lang == "c":
        path = os.path.join(work, "quickstart.c")
        exe = os.path.join(work, "quickstart")
        with open(path, "w") as f:
            f.write(code)
        cc = subprocess.run([args.cc, "-std=c11", path, "-I", os.path.join(args.source, "core"),
                             "-L", args.build, "-lpolygpu", "-Wl,-rpath," + args.build, "-o",
                             exe], capture_output=True, text=True)
        if cc.returncode:
            return None, cc.returncode, cc.stderr
        cmd = [exe]
    else:
        return None, 1, "no runner for language %r" % lang
    if lang != "c":
        with open(path, "w") as f:
            f.write(code)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=work, timeout=300)
    return p.stdout, p.returncode, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("build")
    ap.add_argument("--lua")
    ap.add_argument("--java")
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--not-built", action="append", default=[])
    args = ap.parse_args()
    with open(os.path.join(args.source, "README.md")) as f:
        found = runnable(f.read())
    tools = {"lua": args.lua, "java": args.java, "c": args.cc, "python": sys.executable}
    passed = failed = 0
    langs = set()
    for lang, code, want, line in found:
        langs.add(lang)
        name = "README.md:%d (%s)" % (line, lang)
        if lang in args.not_built:
            print("not run %s: the %s binding is not built in this configuration" % (name, lang))
            continue
        if not tools.get(lang):
            print("FAIL %s: no %s toolchain was found at configure time" % (name, lang))
            failed += 1
            continue
        with tempfile.TemporaryDirectory(prefix="pg-readme-") as work:
            got, status, err = run(lang, code, work, args)
        if status or got is None or got.rstrip() != want.rstrip():
            failed += 1
            print("FAIL %s: exit status %s" % (name, status))
            if err:
                print("  stderr:\n    " + err.strip().replace("\n", "\n    "))
            if got is not None:
                diff = difflib.unified_diff(want.rstrip().split("\n"), got.rstrip().split("\n"),
                                            "README shows", "the block printed", lineterm="")
                print("  " + "\n  ".join(diff))
        else:
            passed += 1
            print("ok   %s" % name)
    for needed in ("python", "lua", "java", "c"):
        if needed not in langs:
            print("FAIL README.md has no runnable %s block" % needed)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
