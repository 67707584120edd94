#!/usr/bin/env python3
"""check_docs.py: what a newcomer follows to the letter does what the documents say (issue 41).

    check_docs.py SOURCE_DIR BUILD_DIR [--lua EXE] [--mpiexec EXE]

- shadow_import: `import polygpu` in bindings/python (the source folder shadows the package)
  fails with a message that says so, not "circular import";
- untracked_outputs: the files the examples write at the top of a checkout (dag.dot, ...) are not
  tracked, and they and the wheel's dist/ are ignored by git;
- notebook_setup: the notebook says how to install JupyterLab, and the `notebook` extra it names
  exists in setup.py with jupyterlab in it;
- lua_readme: bindings/lua/README.md's lua blocks run as written (the first, then the gemm one
  after it), and its one `rt:stats()` row lists exactly the fields rt:stats() returns;
- bench_cpu_plan: benchmarks/run.py on host:4 plans what benchmarks/README.md says (the polygpu
  version; Lua and Java with --versions) and labels device counts "device", not "GPU";
- mpirun_command: the README's first mpirun command runs as written from the top of the checkout
  (as root with Open MPI's consent variables, which the README names).

Prints one line per check and "N passed, N failed"; a check whose tool is missing says "not run".
"""

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.M | re.S)


class Checks:
    def __init__(self, args):
        self.args, self.passed, self.failed = args, 0, 0
        self.src, self.build = os.path.abspath(args.source), os.path.abspath(args.build)
        self.env = dict(os.environ, PG_CACHE_DIR=os.path.join(self.build, "kernel-cache"),
                        PYTHONDONTWRITEBYTECODE="1")
        self.env.pop("PG_DEVICES", None)

    def result(self, name, problems):
        if problems:
            self.failed += 1
            print("FAIL %s:\n  %s" % (name, "\n  ".join(problems).replace("\n", "\n  ")))
        else:
            self.passed += 1
            print("ok   %s" % name)

    def read(self, *path):
        with open(os.path.join(self.src, *path), encoding="utf-8") as f:
            return f.read()

    def run(self, cmd, cwd=None, env=None, timeout=600, **kw):
        return subprocess.run(cmd, cwd=cwd or self.src, env=env or self.env, capture_output=True,
                              text=True, timeout=timeout, **kw)

    def shadow_import(self):
        env = dict(self.env, PYTHONPATH=os.path.join(self.build, "bindings", "python"))
        p = self.run([sys.executable, "-c", "import polygpu"],
                     cwd=os.path.join(self.src, "bindings", "python"), env=env)
        last = (p.stderr.strip().split("\n") or [""])[-1]
        problems = []
        if p.returncode == 0:
            problems.append("import polygpu in bindings/python succeeded: the source folder is "
                            "expected to shadow the package there")
        elif "shadows" not in last or "circular import" in last:
            problems.append("the error does not say that the source folder shadows the "
                            "package: " + last)
        self.result("shadow_import", problems)

    def untracked_outputs(self):
        if not os.path.exists(os.path.join(self.src, ".git")):
            print("not run untracked_outputs: %s is not a git checkout" % self.src)
            return
        outputs = ["dag.dot", "dag.json", "dag.svg", "trace.json"]
        tracked = self.run(["git", "ls-files", "--"] + outputs).stdout.split()
        problems = ["%s is tracked at the top of the repository, and the examples overwrite it "
                    "(git rm it)" % t for t in tracked]
        for path in outputs + ["dist/polygpu-0.1.0-cp311-cp311-linux_x86_64.whl"]:
            if self.run(["git", "check-ignore", "-q", "--no-index", path]).returncode != 0:
                problems.append("%s is not ignored (.gitignore)" % path)
        self.result("untracked_outputs", problems)

    def notebook_setup(self):
        nb = json.loads(self.read("examples", "python", "quickstart.ipynb"))
        intro = "".join(nb["cells"][0]["source"])
        problems = []
        if "jupyter lab" in intro and "pip install jupyterlab" not in intro:
            problems.append("the notebook says `jupyter lab` but not how to install it")
        extras = {}
        for node in ast.walk(ast.parse(self.read("bindings", "python", "setup.py"))):
            if isinstance(node, ast.keyword) and node.arg == "extras_require":
                extras = ast.literal_eval(node.value)
        for name in re.findall(r"bindings/python\[(\w+)\]", intro):
            if "jupyterlab" not in extras.get(name, []):
                problems.append("the notebook names the extra [%s], which setup.py lacks or which "
                                "has no jupyterlab (extras: %s)" % (name, extras))
        if "notebook" not in extras:
            problems.append("setup.py has no `notebook` extra")
        self.result("notebook_setup", problems)

    def lua_readme(self):
        if not self.args.lua:
            print("not run lua_readme: no lua5.4 or no Lua binding in this build")
            return
        text = self.read("bindings", "lua", "README.md")
        blocks = [b for lang, b in FENCE.findall(text) if lang == "lua"]
        problems = []
        env = dict(self.env, LUA_CPATH=os.path.join(self.build, "bindings", "lua", "?.so"))
        with tempfile.TemporaryDirectory(prefix="pg-lua-readme-") as work:
            for n in range(1, len(blocks) + 1):  # block 1 alone, then 1 and 2, ...
                path = os.path.join(work, "block%d.lua" % n)
                with open(path, "w") as f:
                    f.write("\n".join(blocks[:n]))
                p = self.run([self.args.lua, path], env=env, cwd=work)
                if p.returncode:
                    problems.append("lua block %d (after the ones before it) fails: %s"
                                    % (n, p.stderr.strip()))
                elif n == 1 and p.stdout.split() != ["2.0", "1000", "10", "float32"]:
                    problems.append("the first lua block prints %r, not what its comment says"
                                    % p.stdout)
            rows = [line for line in text.split("\n") if line.startswith("| `rt:stats()`")]
            if len(rows) != 1:
                problems.append("`rt:stats()` has %d rows in the methods table, not 1" % len(rows))
            else:
                documented = set(re.search(r"`\{([^}]*)\}`", rows[0]).group(1).replace(" ", "")
                                 .split(","))
                code = ('local pg = require "polygpu"\n'
                        'local rt = pg.runtime {devices = "host:2"}\n'
                        'for k in pairs(rt:stats()) do print(k) end\n'
                        'rt:close()\n')
                path = os.path.join(work, "stats.lua")
                with open(path, "w") as f:
                    f.write(code)
                p = self.run([self.args.lua, path], env=env, cwd=work)
                actual = set(p.stdout.split())
                if p.returncode or documented != actual:
                    problems.append("the `rt:stats()` row lists %s; rt:stats() returns %s (%s)" % (
                        sorted(documented - actual) or "no extra field",
                        sorted(actual - documented) or "no field it lacks", p.stderr.strip()))
        self.result("lua_readme", problems)

    def bench_cpu_plan(self):
        env = dict(self.env, PYTHONPATH=os.path.join(self.build, "bindings", "python"))
        cmd = [sys.executable, os.path.join(self.src, "benchmarks", "run.py"), "--devices",
               "host:4", "--sizes", "tiny", "--list", "--out-dir", tempfile.gettempdir()]
        problems = []
        plain = self.run(cmd, env=env)
        more = self.run(cmd + ["--versions", "polygpu,lua,java"], env=env)
        for p in (plain, more):
            if p.returncode:
                problems.append("run.py --list failed: " + p.stdout + p.stderr)
        labels = [line for line in plain.stdout.split("\n") if " tiny " in line]
        versions = {line.split()[2].split("/")[0] for line in labels}
        if versions != {"polygpu"}:
            problems.append("on host:4 run.py plans the versions %s" % sorted(versions))
        if not labels or any(re.search(r"\d GPUs? ", line) for line in labels):
            problems.append("CPU devices labelled as GPUs: " + "; ".join(labels[:3]))
        more_versions = {line.split()[2].split("/")[0] for line in more.stdout.split("\n")
                         if " tiny " in line}
        if not {"lua", "java"} <= more_versions:
            problems.append("--versions polygpu,lua,java plans %s" % sorted(more_versions))
        readme = self.read("benchmarks", "README.md")
        if "--versions polygpu,lua,java" not in readme:
            problems.append("benchmarks/README.md does not say how to run the Lua and Java "
                            "versions on CPU devices (--versions polygpu,lua,java)")
        self.result("bench_cpu_plan", problems)

    def mpirun_command(self):
        if not self.args.mpiexec:
            print("not run mpirun_command: this build has no MPI")
            return
        block = re.search(r"^```sh\n(mpirun [^\n]*ranks\.py[^\n]*)$", self.read("README.md"), re.M)
        if not block:
            self.result("mpirun_command", ["README.md has no ```sh block starting with an "
                                           "mpirun command for examples/python/ranks.py"])
            return
        cmd = block.group(1).split("#")[0].strip()
        env = dict(self.env, PATH=os.pathsep.join(
            [os.path.dirname(os.path.abspath(self.args.mpiexec)),
             os.path.dirname(sys.executable), self.env.get("PATH", "")]))
        if os.geteuid() == 0:  # the README's words for root
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        # Containers often forbid Open MPI's single-copy (CMA) transfers (as in CMake's tests).
        env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        build = os.path.relpath(self.build, self.src)
        if build != "build":
            cmd = re.sub(r"(?<==)build/", build + "/", cmd)
        p = self.run(["bash", "-c", cmd], env=env, timeout=300)
        nranks = re.search(r"-np (\d+)", cmd).group(1)
        want = "%s rank(s): checksum 2358108.0" % nranks
        self.result("mpirun_command", [] if p.returncode == 0 and want in p.stdout else [
            "`%s` exited %d without printing %r:\n%s" % (cmd, p.returncode, want,
                                                        (p.stdout + p.stderr).strip()[-3000:])])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("build")
    ap.add_argument("--lua")
    ap.add_argument("--mpiexec")
    ap.add_argument("--only", action="append", help="run only these checks")
    args = ap.parse_args()
    c = Checks(args)
    for name in ("shadow_import", "untracked_outputs", "notebook_setup", "lua_readme",
                 "bench_cpu_plan", "mpirun_command"):
        if not args.only or name in args.only:
            getattr(c, name)()
    print("%d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
