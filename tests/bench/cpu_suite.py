#!/usr/bin/env python3
"""tests/bench/cpu_suite.py: the views workloads of the benchmark suite on CPU devices (the ctest
bench_views_cpu): JACOBI (polygpu from Python, Lua and Java), CG-VIEWS and MUL-VIEWS, with CG and
MUL beside them, at their tiny sizes on host:4, on 1 and 4 devices, each result checked against
its NumPy reference by benchmarks/run.py, and polygpu-elided for the views workloads. Then, from
the results file: every configuration ran and validated, the elided runs skipped copies and are
marked not validated, JACOBI on 4 devices moved the halos between devices and fewer bytes than
whole-array coherence would, its copies were timed, and the report has the views tables.

    python3 tests/bench/cpu_suite.py BUILD_DIR [OUT_DIR]

Lua and Java run where run.py finds them (lua5.4 and the Lua binding; javac or the carried jar
and the Java binding); where not, run.py says why and this test says so and goes on."""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHES = ("jacobi", "cg-views", "mul-views")
ALSO = ("cg", "mul")  # the one-array-per-partition versions, for the views / arrays table


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    out = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else tempfile.mkdtemp(
        prefix="pgb-views-")
    os.makedirs(out, exist_ok=True)
    name = "views-cpu"
    path = os.path.join(out, name + ".json")
    if os.path.exists(path):
        os.unlink(path)  # run.py merges into an existing file
    cmd = [sys.executable, os.path.join(ROOT, "benchmarks", "run.py"),
           "--devices", "host:4", "--sizes", "tiny", "--gpus", "1,4",
           "--bench", ",".join(BENCHES + ALSO), "--mul-sweep", "none",
           "--versions", "polygpu,polygpu-elided,lua,java",
           "--policies", "minmax-transfer-time,round-robin", "--warmup", "1", "--runs", "3",
           "--build-dir", build, "--build", "never", "--out-dir", out, "--name", name,
           "--no-plots"]
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd)
    failures = []
    if r.returncode:
        failures.append("run.py exited with %d" % r.returncode)
    with open(path) as f:
        data = json.load(f)
    res = data["results"]
    skipped = data["invocations"][-1].get("skipped_versions", {})
    for v, why in skipped.items():
        print("note: %s versions skipped: %s" % (v, why.splitlines()[0] if why else ""))

    def find(bench, version, gpus, policy="minmax-transfer-time"):
        return [x for x in res if (x["bench"], x["version"], x["gpus"], x.get("policy")) ==
                (bench, version, gpus, policy)]

    want = [(b, "polygpu", g) for b in BENCHES + ALSO for g in (1, 4)]
    want += [(b, "polygpu-elided", g) for b in BENCHES for g in (1, 4)]
    want += [(b, "polygpu", 4, "round-robin") for b in BENCHES]
    want += [("jacobi", v, g) for v in ("lua", "java") if v not in skipped for g in (1, 4)]
    for w in want:
        got = find(*w)
        if not got:
            failures.append("no result for %s" % (w,))
        elif not got[0].get("valid"):
            failures.append("%s: %s" % (w, got[0].get("error") or got[0].get("check")))
        elif w[1] != "polygpu-elided" and not got[0].get("validated"):
            failures.append("%s: not validated against NumPy" % (w,))
    for b in BENCHES:
        for e in find(b, "polygpu-elided", 4):
            s = e.get("stats_last_run", {})
            if e.get("validated") is not False or "not validated" not in e.get("check", ""):
                failures.append("%s polygpu-elided is not marked as not validated" % b)
            if b != "cg-views" and not s.get("copies_elided"):
                failures.append("%s polygpu-elided on 4 devices elided no copy: %s" % (b, s))
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from workloads import jacobi  # noqa: E402
    for j in find("jacobi", "polygpu", 4):
        links = j["stats_last_run"]["link_bytes"]
        moved = sum(v for k, v in links.items() if "host" not in k.split("->"))
        size = tuple(jacobi.SIZES["tiny"])
        least = jacobi.whole_array_min_bytes(size, 4, j["partitions"])
        halo = jacobi.halo_bytes(size, 4, j["partitions"])
        print("jacobi on 4 devices: %d bytes between devices per run (contiguous halos %d, "
              "whole-array at least %d)" % (moved, halo, least))
        if not halo <= moved < least:
            failures.append("jacobi moved %d bytes between devices, expected at least the halos "
                            "(%d) and fewer than whole-array coherence (%d)" % (moved, halo, least))
        ct = j.get("copy_time") or {}
        if not ct.get("copies") or ct.get("max_device_s", 0) <= 0:
            failures.append("jacobi: no timed copies in %s" % ct)
    with open(os.path.join(out, name + ".md")) as f:
        md = f.read()
    for title in ("## Views against one array per partition",
                  "## Views: bytes moved and the infinite-bandwidth bound", "## JACOBI"):
        if title not in md:
            failures.append("the report has no section %r" % title)
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    print("bench views on CPU devices: %d results, all as expected" % len(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
