#!/usr/bin/env python3
"""check_readme.py: every fenced block of README.md marked `run` (```python run, ```lua run,
```java run, ```c run) is written to a file and run against the build, as the README tells a
user to, and its standard output must equal the ```text output block that follows it. Each such
block is also a file in examples/readme (quickstart.py, quickstart.lua, Quickstart.java,
quickstart.c), which must be identical to it, and the first command in the prose after the block
that names that file is run as written, from the top of the checkout (`build/` standing for the
build folder), and must print the same.

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


# The file in examples/readme that holds each language's block.
SHIPPED = {"python": "quickstart.py", "lua": "quickstart.lua", "java": "Quickstart.java",
           "c": "quickstart.c"}


def command_after(text, line, name):
    """The first inline `command` after the block whose body starts at line index `line` (and
    after its output block), before the next run block, that names examples/readme/NAME."""
    lines, end, fences = text.split("\n"), line, 0
    while end < len(lines) and fences < 3:  # the block's closing fence, then its output block's
        fences += lines[end].startswith("```")
        end += 1
    rest = "\n".join(lines[end:])
    nxt = re.search(r"^```\S+ run", rest, re.M)
    rest = rest[:nxt.start()] if nxt else rest
    for span in re.findall(r"`([^`]+)`", rest):
        if "examples/readme/" + name in span:
            return " ".join(span.split())
    return None


def run_command(cmd, args):
    """Run a README command as a user would, from the top of the checkout; build/ in it means
    this build's folder. (stdout, status, stderr)."""
    build = os.path.relpath(args.build, args.source)
    if build != "build":
        cmd = re.sub(r"(?:(?<=[\s='\":/])|(?<=-L)|^)build(?=[/\s]|$)", build, cmd)
    env = dict(os.environ, PG_CACHE_DIR=os.path.join(args.build, "kernel-cache"))
    env.pop("PG_DEVICES", None)
    # The tools CMake found come first on PATH, under the names the README uses.
    dirs = [os.path.dirname(os.path.abspath(t)) for t in (args.java, args.lua, sys.executable)
            if t]
    env["PATH"] = os.pathsep.join(dirs + [env.get("PATH", "")])
    p = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env,
                       cwd=args.source, timeout=300)
    return p.stdout, p.returncode, p.stderr


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
    args.source, args.build = os.path.abspath(args.source), os.path.abspath(args.build)
    with open(os.path.join(args.source, "README.md")) as f:
        readme = f.read()
    found = runnable(readme)
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
        # The same program as a file, and the README's command for it, run as written.
        shipped = os.path.join(args.source, "examples", "readme", SHIPPED.get(lang, "?"))
        try:
            with open(shipped) as f:
                same = f.read() == code
        except OSError:
            same = None
        cmd = command_after(readme, line, SHIPPED.get(lang, "?"))
        if not same:
            failed += 1
            print("FAIL %s: %s %s" % (name, os.path.relpath(shipped, args.source),
                                       "differs from the block" if same is False else
                                       "is missing (the block's program as a file)"))
        elif cmd is None:
            failed += 1
            print("FAIL %s: no command naming examples/readme/%s follows the block"
                  % (name, SHIPPED[lang]))
        else:
            got, status, err = run_command(cmd, args)
            if status or got.rstrip() != want.rstrip():
                failed += 1
                print("FAIL %s: the command `%s` exited %s" % (name, cmd, status))
                if err:
                    print("  stderr:\n    " + err.strip().replace("\n", "\n    "))
                diff = difflib.unified_diff(want.rstrip().split("\n"), got.rstrip().split("\n"),
                                            "README shows", "the command printed", lineterm="")
                print("  " + "\n  ".join(diff))
            else:
                passed += 1
                print("ok   %s: `%s`" % (name, cmd))
    for needed in ("python", "lua", "java", "c"):
        if needed not in langs:
            print("FAIL README.md has no runnable %s block" % needed)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
