#!/usr/bin/env python3
"""run.py: the benchmark suite of issue 8 -- the GrCUDA multi-GPU paper's five workloads (VEC,
B&S, ML, CG, MUL) through polygpu under every device policy, against hand-written CUDA C (N
GPUs, and synchronous on one), CuPy (VEC, B&S), and polygpu from Lua and Java (VEC, B&S) -- and
the views workloads: JACOBI (halo exchange on views of one array per grid; also from Lua, Java
and CUDA C) and CG-VIEWS, MUL-VIEWS (CG and MUL on views of one matrix and result array), with
polygpu-elided (copies skipped: the infinite-bandwidth bound).

Every configuration: setup, 3 warm-ups, 10 timed runs (median, min and max kept), the result of
the last run validated against a NumPy reference. Results go to ``<out-dir>/<name>.json``
(merged with an earlier file of the same name, so a suite can be run in several invocations),
``<name>.md`` and ``<name>-*.png``; ``<name>`` is ``<device>-<date>`` by default.

    python3 benchmarks/run.py --devices host:4 --sizes tiny          # CPU smoke test (to /tmp)
    python3 benchmarks/run.py --bench vec --sizes small,medium        # on a GPU machine
    python3 benchmarks/run.py --report-only --name h200x4-2026-11-24  # tables and plots again

See benchmarks/README.md for the split of a full GPU run into 10-minute invocations.
"""

import argparse
import datetime
import glob
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from workloads import WORKLOADS  # noqa: E402  (after the path)
import workloads.common  # noqa: E402
from workloads.common import fmt_bytes, sample_stride  # noqa: E402

POLICIES = ("round-robin", "stream-aware", "min-transfer-size", "minmax-transfer-time",
            "min-transfer-time", "min-finish-time", "earliest-finish")
DEFAULT_POLICY = "minmax-transfer-time"
#: cuda: the tuned hand-written CUDA C baseline; cuda-untuned: its first version (an ablation);
#: cuda-streams: CG's tuned baseline without the CUDA graph; cuda-sync: synchronous, one GPU;
#: polygpu-elided: the polygpu Python version on a runtime made with elide_copies=True (every
#: copy skipped: values are wrong and not validated, the time is the infinite-bandwidth bound).
VERSIONS = ("polygpu", "polygpu-split", "polygpu-elided", "cuda", "cuda-untuned", "cuda-streams", "cuda-sync",
            "cupy", "lua", "java")
CUDA_VERSIONS = ("cuda", "cuda-untuned", "cuda-streams", "cuda-sync")
#: versions run in this process (Python) and versions that take a device policy
PYTHON_VERSIONS = ("polygpu", "polygpu-split", "polygpu-elided")
POLICY_VERSIONS = ("polygpu", "polygpu-split", "polygpu-elided", "lua", "java")
#: versions written for some benchmarks only (cuda and cuda-sync: where workloads/cuda/<name>.cu
#: is; a variant's ONLY_VERSIONS limits it further)
SOME_BENCH_VERSIONS = {"cupy": ("vec", "bs"), "lua": ("vec", "bs", "jacobi"),
                       "java": ("vec", "bs", "jacobi"), "cuda-streams": ("cg", "jacobi"),
                       "cuda-untuned": ("vec", "bs", "ml", "cg", "mul"),
                       "polygpu-elided": ("jacobi", "cg-views", "mul-views"),
                       "polygpu-split": ("vec", "bs", "mul", "jacobi")}
#: paper-*: the GrCUDA paper's range (its benchmark_wrapper.py), smallest, middle, largest
PAPER_SIZES = ("paper-min", "paper-mid", "paper-max")
SIZES = ("tiny", "small", "medium", "large") + PAPER_SIZES
#: a configuration runs only if its device memory fits in this share of one GPU's memory
MEMORY_SHARE = 0.8


def log(*a):
    """Progress on stderr, flushed (the device tool shows the tail of the output)."""
    print(*a, file=sys.stderr, flush=True)


# ================================================================ environment and builds

def sh(cmd, **kw):
    """Run a command, returning CompletedProcess with text output (never raises on status)."""
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def find_build_dir(arg):
    """The polygpu build tree: --build-dir, else build-gpu/ or build/ when one holds the Python
    module, else build-gpu/ (to be built)."""
    if arg:
        return os.path.abspath(arg)
    for d in ("build-gpu", "build"):
        if glob.glob(os.path.join(ROOT, d, "bindings", "python", "polygpu", "_polygpu*.so")):
            return os.path.join(ROOT, d)
    return os.path.join(ROOT, "build-gpu")


def lua_from_carry():
    """Debian's Lua 5.4 packages carried in .carry/lua/ (tests/gpu/prepare-carry.sh), unpacked
    to /tmp/lua: (interpreter, include dir, library) or None."""
    debs = glob.glob(os.path.join(ROOT, ".carry", "lua", "*.deb"))
    if not debs:
        return None
    if not os.path.exists("/tmp/lua/usr/bin/lua5.4"):
        for d in debs:
            sh(["dpkg", "-x", d, "/tmp/lua"])
    lib = glob.glob("/tmp/lua/usr/lib/*/liblua5.4.so")
    if not (os.path.exists("/tmp/lua/usr/bin/lua5.4") and lib):
        return None
    return "/tmp/lua/usr/bin/lua5.4", "/tmp/lua/usr/include/lua5.4", lib[0]


def build_polygpu(build_dir, source_dir=ROOT):
    """Configure and build polygpu from source_dir with its bindings (as tests/gpu/run.sh does),
    Lua from .carry/ when this machine has none. Returns True when the Python module is there."""
    cfg = ["cmake", "-S", source_dir, "-B", build_dir, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
           "-DPG_BINDINGS=ON", "-DPython3_EXECUTABLE=" + sys.executable]
    env = dict(os.environ)
    carried = None if shutil.which("lua5.4") else lua_from_carry()
    if carried:
        lua, inc, lib = carried
        multiarch = glob.glob("/tmp/lua/usr/include/*-linux-gnu")
        if multiarch:  # Debian's luaconf.h lives there
            env["CFLAGS"] = (env.get("CFLAGS", "") + " -I" + multiarch[0]).strip()
        env["LD_LIBRARY_PATH"] = os.path.dirname(lib) + (
            ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        cfg += ["-DLUA_INCLUDE_DIR=" + inc, "-DLUA_LIBRARY=" + lib, "-DPG_LUA_EXECUTABLE=" + lua]
    log("build: polygpu into %s (a few minutes the first time)" % build_dir)
    os.makedirs(build_dir, exist_ok=True)
    logf = os.path.join(build_dir, "bench-build.log")
    with open(logf, "w") as f:
        for cmd in (cfg, ["cmake", "--build", build_dir, "-j%d" % (os.cpu_count() or 4)]):
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, text=True)
            if r.returncode:
                log("build: %s failed, see %s" % (cmd[0:2], logf))
                return False
    os.environ.update({k: env[k] for k in ("CFLAGS", "LD_LIBRARY_PATH") if k in env})
    return True


def import_polygpu(build_dir, build, source_dir=ROOT):
    """Import polygpu from the build tree, building it first when missing (--build)."""
    pydir = os.path.join(build_dir, "bindings", "python")
    have = glob.glob(os.path.join(pydir, "polygpu", "_polygpu*.so"))
    if (build == "always" or (build == "auto" and not have)) and not build_polygpu(
            build_dir, source_dir):
        sys.exit("run.py: could not build polygpu")
    sys.path.insert(0, pydir)
    os.environ["PYTHONPATH"] = pydir + (":" + os.environ["PYTHONPATH"]
                                        if os.environ.get("PYTHONPATH") else "")
    import polygpu
    return polygpu


def newer(target, sources):
    """True when target is missing or older than any source."""
    if not os.path.exists(target):
        return True
    t = os.path.getmtime(target)
    return any(os.path.getmtime(s) > t for s in sources)


class Tools:
    """Where the non-polygpu-Python versions come from; each is None when unavailable, with
    the reason in ``why``."""

    def __init__(self, build_dir, benches, versions, arch):
        self.build_dir, self.why = build_dir, {}
        self.bench_dir = os.path.join(build_dir, "bench")
        os.makedirs(self.bench_dir, exist_ok=True)
        self.cuda = self._cuda(benches, arch, "") if {"cuda", "cuda-streams", "cuda-sync"} & \
            versions else None
        self.cuda_untuned = self._cuda(benches, arch, "untuned") if "cuda-untuned" in versions \
            else None
        self.lua = self._lua() if "lua" in versions else None
        self.java = self._java() if "java" in versions else None
        self.cupy = self._cupy() if "cupy" in versions else None

    def _cuda(self, benches, arch, variant):
        """The baselines of workloads/cuda (variant "") or workloads/cuda/untuned."""
        nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                        if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
        if not nvcc:
            self.why["cuda"] = "nvcc not found"
            return None
        out = {}
        wl = os.path.join(HERE, "workloads")
        key = "cuda-untuned" if variant else "cuda"
        for b in benches:
            src = os.path.join(wl, "cuda", variant, b + ".cu")
            if not os.path.exists(src):  # a workload without this baseline (the variants)
                continue
            exe = os.path.join(self.bench_dir, b + "_cuda" + ("_" + variant if variant else ""))
            deps = [src, os.path.join(wl, "cuda", "common.h")] + glob.glob(
                os.path.join(wl, "kernels", "*"))
            if newer(exe, deps):
                log("build: %s (nvcc -arch=%s)" % (os.path.relpath(exe, ROOT), arch))
                r = sh([nvcc, "-O3", "-std=c++17", "-arch=" + arch, "-Xcompiler", "-Wall,-Wextra",
                        "-DPGB_VERSION=\"%s\"" % key, "-o", exe, src])
                if r.returncode:
                    self.why[key] = "nvcc failed on %s: %s" % (b, r.stderr[-2000:])
                    log(self.why[key])
                    continue
            out[b] = exe
        return out or None

    def _lua(self):
        lua = shutil.which("lua5.4")
        inc, env = "/usr/include/lua5.4", {}
        carried = None if lua else lua_from_carry()
        if carried:  # the interpreter needs the carried liblua5.4.so.0
            lua, inc, lib = carried
            old = os.environ.get("LD_LIBRARY_PATH")
            env["LD_LIBRARY_PATH"] = os.path.dirname(lib) + (":" + old if old else "")
        so = os.path.join(self.build_dir, "bindings", "lua", "polygpu.so")
        if not lua or not os.path.exists(so):
            self.why["lua"] = "no lua5.4 or no Lua binding in %s" % self.build_dir
            return None
        clock = os.path.join(self.bench_dir, "pgb_clock.so")
        src = os.path.join(HERE, "workloads", "lua", "pgb_clock.c")
        if newer(clock, [src]):
            cc = shutil.which("cc") or shutil.which("gcc")
            flags = ["-I" + inc] + ["-I" + d for d in glob.glob(
                os.path.join(os.path.dirname(os.path.dirname(inc)), "include", "*-linux-gnu"))]
            r = sh([cc or "cc", "-O2", "-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra"] + flags
                   + [src, "-o", clock])
            if r.returncode:
                self.why["lua"] = "could not build pgb_clock.so: " + r.stderr[-1000:]
                return None
        env["LUA_CPATH"] = "%s/?.so;%s/?.so" % (os.path.dirname(so), self.bench_dir)
        return {"exe": lua, "env": env}

    def _java(self):
        carry = os.path.join(ROOT, ".carry", "java")
        jre = os.path.join(carry, "jre", "bin", "java")
        java = jre if os.path.exists(jre) else shutil.which("java")
        if not java:
            self.why["java"] = "no java"
            return None
        jdir = os.path.join(self.build_dir, "bindings", "java")
        jar, jni = os.path.join(jdir, "polygpu.jar"), os.path.join(jdir, "libpolygpu_jni.so")
        flags = []
        if os.path.exists(jar) and os.path.exists(jni):
            flags = ["-Djava.library.path=" + jdir]
        elif os.path.exists(os.path.join(carry, "polygpu-bundle.jar")):
            jar = os.path.join(carry, "polygpu-bundle.jar")
        else:
            self.why["java"] = "no polygpu.jar in %s nor .carry/java/polygpu-bundle.jar" % jdir
            return None
        src = os.path.join(HERE, "workloads", "java", "PgBench.java")
        bench = os.path.join(self.bench_dir, "polygpu-bench.jar")
        if shutil.which("javac"):
            if newer(bench, [src, jar]):
                r = sh([os.path.join(HERE, "workloads", "java", "build.sh"), jar, bench])
                if r.returncode:
                    self.why["java"] = "javac failed: " + r.stderr[-1000:]
                    return None
        else:
            bench = os.path.join(carry, "polygpu-bench.jar")
            if not os.path.exists(bench):
                self.why["java"] = ("no javac and no .carry/java/polygpu-bench.jar "
                                    "(run benchmarks/workloads/java/build.sh where a JDK is)")
                return None
        return {"cmd": [java] + flags + ["-cp", jar + ":" + bench, "PgBench"]}

    def _cupy(self):
        r = sh([sys.executable, "-c", "import cupy"])
        if r.returncode:
            self.why["cupy"] = "cupy is not installed"
            return None
        return {"cmd": [sys.executable, "-m", "workloads.cupy_bench"]}


def git_commit(override=None):
    """(commit, dirty) of the benchmarked sources: --commit or PGB_COMMIT when given (the copy
    of the working tree on a GPU machine may carry another commit's .git), else git's."""
    if override or os.environ.get("PGB_COMMIT"):
        return override or os.environ["PGB_COMMIT"], None
    r = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"])
    if r.returncode:
        return "unknown", None
    d = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"])
    return r.stdout.strip(), bool(d.stdout.strip())


def device_info(pg, devices):
    """(names, memory per device, kind, compute capability) of the devices behind a spec."""
    with pg.Runtime(devices=devices) as rt:
        devs = rt.devices
    return devs


def device_slug(devs):
    """'h200x4', 'h100x1', 'cpu-host8': the device part of the results' file name."""
    if devs[0]["kind"] == "cpu":
        return "cpu-host%d" % len(devs)
    name = devs[0]["name"].lower().replace("nvidia", "").strip()
    name = "-".join(w for w in name.replace("_", " ").split() if w not in ("tensor", "core"))
    return "%sx%d" % (name.split("-")[0] if name.startswith("h") else name, len(devs))


# ================================================================ references (cached)

def has_version(bench, version):
    """Whether a version of a benchmark exists."""
    mod = WORKLOADS[bench]
    if version not in getattr(mod, "ONLY_VERSIONS", VERSIONS):
        return False
    if version in SOME_BENCH_VERSIONS:
        return bench in SOME_BENCH_VERSIONS[version]
    if version in ("cuda", "cuda-sync"):
        return os.path.exists(os.path.join(HERE, "workloads", "cuda", bench + ".cu"))
    return True


def reference(mod, size, cache_dir):
    """The module's NumPy reference for a size, cached as .npz (computing the large ones takes
    tens of seconds); a variant shares its BASE workload's."""
    key = "%s-%s-v1" % (getattr(mod, "BASE", None) or mod.NAME,
                        "x".join(str(v) for v in np.atleast_1d(size)))
    path = os.path.join(cache_dir, key + ".npz")
    if os.path.exists(path):
        with np.load(path) as z:
            return {k: z[k] for k in z.files}
    t = time.time()
    ref = mod.reference(size)
    os.makedirs(cache_dir, exist_ok=True)
    np.savez(path, **ref)
    log("  reference for %s %s computed in %.1f s" % (mod.TITLE, size, time.time() - t))
    return ref


def n_of(mod, size):
    """The --n argument of the subprocess versions."""
    return size[0] if isinstance(size, tuple) else size


# ================================================================ running one configuration

def summarize(times):
    """median, min and max of a list of seconds."""
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}


def stats_delta(a, b):
    """polygpu counters spent between two rt.stats() dicts (one timed run)."""
    out = {k: b[k] - a[k] for k in ("computations", "kernels", "host_accesses", "copies",
                                    "bytes_moved", "host_wait_ns", "copies_elided",
                                    "bytes_elided") if k in b}
    links = {}
    for k, v in b["link_bytes"].items():
        d = v - a["link_bytes"].get(k, 0)
        if d:
            links["%s->%s" % k] = d
    out["link_bytes"] = links
    return out


def run_polygpu(pg, mod, size, nparts, devices, policy, args, elide=False):
    """The Python polygpu version in this process: times, sampled output, counters. elide: on a
    runtime that skips every copy (polygpu-elided)."""
    rt = pg.Runtime(devices=devices, policy=policy, **({"elide_copies": True} if elide else {}))
    try:
        w = mod.Polygpu(rt, size, nparts)
        w.fetch_threads = args.fetch == "threads"
        w.setup()
        # simulated devices: the machine's virtual time, not how long simulating it took
        clock = rt.clock if devices.startswith("sim:") else time.perf_counter
        times = []
        for i in range(args.warmup + args.runs):
            w.prepare()
            if i == args.warmup + args.runs - 1:
                s0 = rt.stats()
            t0 = clock()
            w.run()
            t1 = clock()
            if i >= args.warmup:
                times.append(t1 - t0)
        stats = stats_delta(s0, rt.stats())
        sample = None if workloads.common.TIMING_ONLY else w.sample()
    finally:
        rt.close()
    return times, sample, {"stats_last_run": stats}


def trace_polygpu(pg, mod, size, nparts, devices, policy, path_stem, args):
    """A fresh runtime with GPU timing on: setup, one warm-up, one run; the Chrome trace and the
    DAG (both runs) are written next to path_stem."""
    rt = pg.Runtime(devices=devices, policy=policy, trace=path_stem + "-trace.json")
    try:
        w = mod.Polygpu(rt, size, nparts)
        w.fetch_threads = args.fetch == "threads"
        w.setup()
        w.prepare()
        w.run()
        # The last run's computations start after everything so far: its first id goes beside
        # the trace so that trace_summary.py looks at that run alone.
        rt.sync()
        first_id = 1 + max((v["id"] for v in rt.dag()["vertices"]), default=0)
        with open(path_stem + "-meta.json", "w") as f:
            json.dump({"first_id": first_id}, f)
        w.prepare()
        w.run()
        rt.export_dag(path_stem + "-dag.json")
    finally:
        rt.close()


def copy_time_polygpu(pg, mod, size, nparts, devices, policy, args):
    """The copies of one run of the polygpu version, timed: a fresh runtime with GPU timing on
    (the trace option; recordings then replay eagerly, so each copy is a vertex of the DAG),
    setup, one warm-up, one run. Returns the number of copies, their bytes, the sum of their
    durations (busy_s), that sum per device (a copy counts for its device end) and its largest
    (max_device_s: what the copies would add to the run if they overlapped nothing but each
    other on different devices)."""
    fd, path = tempfile.mkstemp(prefix="pgb-copies-", suffix=".json")
    os.close(fd)
    rt = pg.Runtime(devices=devices, policy=policy, trace=path)
    try:
        w = mod.Polygpu(rt, size, nparts)
        w.fetch_threads = args.fetch == "threads"
        w.setup()
        w.prepare()
        w.run()
        rt.sync()
        first_id = 1 + max((v["id"] for v in rt.dag()["vertices"]), default=0)
        w.prepare()
        w.run()
        rt.sync()
        copies = [v for v in rt.dag()["vertices"] if v["kind"] == "copy" and v["id"] >= first_id]
    finally:
        rt.close()
        os.unlink(path)
    per = {}
    for v in copies:
        per[v["device"]] = per.get(v["device"], 0) + max(0, v["end_ns"] - v["start_ns"]) * 1e-9
    return {"copies": len(copies), "bytes": sum(v.get("bytes", 0) for v in copies),
            "busy_s": sum(per.values()), "per_device_s": {str(d): t for d, t in per.items()},
            "max_device_s": max(per.values(), default=0.0)}


def run_subprocess(cmd, sample_path, timeout, env=None, cwd=None):
    """A baseline, CuPy, Lua or Java run: (times, sample, extra) from its JSON line and sample
    file; raises RuntimeError with the output's tail on failure; None when it skipped itself."""
    r = subprocess.run(cmd, text=True, capture_output=True, timeout=timeout, env=env, cwd=cwd)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode or not lines:
        raise RuntimeError("%s exited with %d:\n%s%s" % (
            " ".join(cmd[:3]), r.returncode, r.stdout[-1500:], r.stderr[-2500:]))
    out = json.loads(lines[-1])
    if "skipped" in out:
        return None
    sample = np.fromfile(sample_path, dtype="<f8")
    return out["times_s"], sample, {"device": out.get("device")}


class Plan:
    """One configuration to run."""

    def __init__(self, bench, size_name, version, gpus, nparts, policy=None, sweep=False):
        self.bench, self.size_name, self.version = bench, size_name, version
        self.gpus, self.nparts, self.policy, self.sweep = gpus, nparts, policy, sweep

    def key(self):
        return (self.bench, self.size_name, self.version, self.policy or "", self.gpus,
                self.nparts)

    #: what a device count counts: "device" on CPU devices (host:N), set by main
    unit = "GPU"

    def label(self):
        return "%s %s %s%s %d %s%s P=%d%s" % (
            self.bench, self.size_name, self.version, "/" + self.policy if self.policy else "",
            self.gpus, self.unit, "" if self.gpus == 1 else "s", self.nparts,
            " (sweep)" if self.sweep else "")


def result_key(r):
    return (r["bench"], r["size"], r["version"], r.get("policy") or "", r["gpus"],
            r["partitions"])


def execute(plan, ctx):
    """Run one plan; returns the result record (with "error" set on failure)."""
    args, mod = ctx["args"], WORKLOADS[plan.bench]
    size = mod.SIZES[plan.size_name]
    rec = {"bench": plan.bench, "size": plan.size_name, "n": size if not isinstance(size, tuple)
           else list(size), "desc": mod.describe(size), "version": plan.version,
           "policy": plan.policy, "gpus": plan.gpus, "partitions": plan.nparts,
           "sweep": plan.sweep, "invocation": ctx["invocation"],
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    devices = ctx["device_specs"][plan.gpus]
    rec["device_bytes"] = mod.device_bytes(size)
    if ctx.get("gpu_memory"):
        rec["memory_share"] = round(rec["device_bytes"] / plan.gpus / ctx["gpu_memory"], 4)
    stride = sample_stride(mod.sample_total(size), mod.SAMPLE_LIMIT)
    t_start = time.time()
    try:
        ref = reference(mod, size, ctx["ref_cache"])
        if plan.version in PYTHON_VERSIONS:
            elide = plan.version == "polygpu-elided"
            if plan.version == "polygpu-split":  # the same harness over the whole-array class
                mod = types.SimpleNamespace(**vars(mod))
                mod.Polygpu = mod.PolygpuSplit
            times, sample, extra = run_polygpu(ctx["pg"], mod, size, plan.nparts, devices,
                                               plan.policy, args, elide=elide)
            simulated = devices.startswith("sim:")
            if elide or simulated:  # the values are wrong by design: the time alone is the result
                rec.update(summarize(times))
                why = ("simulated devices (%s): kernels do not compute, the time is the "
                       "simulator's prediction" % devices if simulated else
                       "elide_copies skipped %d copies (%s), so the values are wrong (the "
                       "infinite-bandwidth bound)" % (
                           extra["stats_last_run"].get("copies_elided", 0),
                           fmt_bytes(extra["stats_last_run"].get("bytes_elided", 0))))
                rec.update({"times_s": times, "valid": True, "validated": False, "error": None,
                            "check": "not validated: " + why})
                rec.update(extra)
                rec["wall_s"] = round(time.time() - t_start, 2)
                return rec
            if getattr(mod, "COPY_TIME", False) and plan.gpus > 1:
                extra["copy_time"] = copy_time_polygpu(ctx["pg"], mod, size, plan.nparts,
                                                       devices, plan.policy, args)
            if args.trace:
                stem = os.path.join(args.trace, "%s-%s-%dgpu-%s-P%d" % (
                    plan.bench, plan.size_name, plan.gpus, plan.policy, plan.nparts))
                os.makedirs(args.trace, exist_ok=True)
                trace_polygpu(ctx["pg"], mod, size, plan.nparts, devices, plan.policy, stem, args)
                extra["trace"] = stem + "-trace.json"
                import trace_summary  # beside this file
                names, events, gpu, status = trace_summary.load(extra["trace"])
                extra["trace_summary"] = trace_summary.summarize(names, events) + \
                    trace_summary.gpu_lines(trace_summary.gpu_attribution(names, gpu), status)
                for line in extra["trace_summary"]:
                    log("    trace: " + line)
        else:
            tools = ctx["tools"]
            fd, sample_path = tempfile.mkstemp(prefix="pgb-", suffix=".bin")
            os.close(fd)
            common = ["--n", str(n_of(mod, size)), "--partitions", str(plan.nparts),
                      "--warmup", str(args.warmup), "--runs", str(args.runs),
                      "--sample-stride", str(stride), "--sample-out", sample_path]
            common += mod.extra_args(size)
            env, cwd = None, None
            if plan.version in CUDA_VERSIONS:
                exes = tools.cuda_untuned if plan.version == "cuda-untuned" else tools.cuda
                cmd = [exes[plan.bench], "--gpus", str(plan.gpus)] + common
                if plan.version == "cuda-sync":
                    cmd.append("--sync")
                elif plan.version == "cuda-streams":
                    cmd.append("--no-graph")
            elif plan.version == "cupy":
                cmd = tools.cupy["cmd"] + [plan.bench, "--gpus", str(plan.gpus)] + common
                cwd = HERE
            elif plan.version == "lua":
                script = os.path.join(HERE, "workloads", "lua", plan.bench + ".lua")
                cmd = [tools.lua["exe"], script, "--devices", devices, "--policy", plan.policy,
                       "--kernels", os.path.join(HERE, "workloads", "kernels")] + common
                env = dict(os.environ, **tools.lua["env"])
            elif plan.version == "java":
                cmd = tools.java["cmd"] + [plan.bench, "--devices", devices, "--policy",
                                           plan.policy, "--kernels",
                                           os.path.join(HERE, "workloads", "kernels")] + common
            else:
                raise ValueError(plan.version)
            try:
                got = run_subprocess(cmd, sample_path, ctx["timeout"](), env=env, cwd=cwd)
            finally:
                os.unlink(sample_path)
            if got is None:
                rec["error"] = "skipped by the program (see its output)"
                return rec
            times, sample, extra = got
        ok, msg = mod.check(sample, ref, size)
        rec.update(summarize(times))
        rec.update({"times_s": times, "valid": bool(ok), "validated": True, "check": msg,
                    "error": None})
        rec.update(extra)
    except Exception as e:  # one failure must not end the suite
        rec.update({"valid": False, "error": "%s: %s" % (type(e).__name__, e)})
        if args.verbose:
            traceback.print_exc()
    rec["wall_s"] = round(time.time() - t_start, 2)
    return rec


# ================================================================ results file

def load_results(paths):
    """Merge the results of earlier files (later ones win for the same configuration)."""
    runs, results = [], {}
    for p in paths:
        if not p or not os.path.exists(p):
            continue
        with open(p) as f:
            data = json.load(f)
        base = len(runs)
        runs.extend(data.get("invocations", []))
        for r in data.get("results", []):
            r = dict(r, invocation=base + r.get("invocation", 0))
            results[result_key(r)] = r
    return runs, results


def save_results(path, name, invocations, results):
    data = {"schema": 1, "name": name, "invocations": invocations,
            "results": sorted(results.values(), key=lambda r: (
                list(WORKLOADS).index(r["bench"]), SIZES.index(r["size"]),
                VERSIONS.index(r["version"]), r.get("policy") or "", r["gpus"], r["partitions"]))}
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


# ================================================================ report: Markdown and plots

def fmt_ms(s):
    if s is None:
        return "–"
    ms = s * 1e3
    return "%.0f" % ms if ms >= 100 else ("%.1f" % ms if ms >= 10 else "%.2f" % ms)


def fmt_gb(n):
    return "%.1f GB" % (n / 1e9) if n >= 1e8 else "%.0f MB" % (n / 1e6)


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


class Report:
    """Tables and plots from the merged results."""

    def __init__(self, results, invocations, name):
        self.name, self.invocations = name, invocations
        self.ok = [r for r in results.values() if r.get("valid") and r.get("median_s")]
        self.all = list(results.values())
        self.gpus = sorted({r["gpus"] for r in self.all}) or [1]
        self.maxg = max(self.gpus)
        devs = invocations[-1].get("devices", []) if invocations else []
        self.unit = "device" if devs and devs[0].get("kind") == "cpu" else "GPU"
        # the partitions of each benchmark's main tables, per size: the most common outside
        # the sweep (B&S has 24 at the paper's sizes, 16 below)
        self.parts = {}
        for b, mod in WORKLOADS.items():
            for sz in mod.SIZES:
                ps = [r["partitions"] for r in self.all
                      if r["bench"] == b and r["size"] == sz and not r.get("sweep")]
                self.parts[b, sz] = (max(set(ps), key=ps.count) if ps
                                     else default_partitions(mod, sz))

    def gpus_word(self, g):
        """'1 GPU', '4 GPUs' (devices on CPU)."""
        return "%d %s%s" % (g, self.unit, "" if g == 1 else "s")

    def pick(self, bench, size, version, gpus, policy=None, parts=None, sweep=None):
        """The valid result of one configuration (default partitions unless given)."""
        best = None
        for r in self.ok:
            if (r["bench"], r["size"], r["version"], r["gpus"]) != (bench, size, version, gpus):
                continue
            if version in POLICY_VERSIONS and (r.get("policy") or DEFAULT_POLICY) != (
                    policy or DEFAULT_POLICY):
                continue
            want_p = parts if parts is not None else self.parts[bench, size]
            if r["partitions"] != want_p:
                continue
            best = r
        return best

    def same_run(self, r, version):
        """The valid result of `version` in r's configuration and run.py invocation."""
        if not r:
            return None
        for q in self.ok:
            if (q["bench"], q["size"], q["gpus"], q["partitions"], q["version"],
                    q.get("invocation")) == (r["bench"], r["size"], r["gpus"], r["partitions"],
                                             version, r.get("invocation")):
                return q
        return None

    def sizes_of(self, bench):
        return [s for s in SIZES if any(r["bench"] == bench and r["size"] == s for r in self.all)]

    def largest(self, bench, need=("polygpu", "cuda")):
        """The largest size with a result of each needed version at the most GPUs."""
        for s in reversed(self.sizes_of(bench)):
            gs = [g for g in self.gpus if all(self.pick(bench, s, v, g) for v in need)]
            if gs:
                return s
        return None

    # ---------------------------------------------------------------- Markdown
    def markdown(self):
        out = []
        inv = self.invocations[-1] if self.invocations else {}
        out.append("# polygpu benchmarks: %s\n" % self.name)
        devs = inv.get("devices", [])
        if devs and devs[0].get("kind") == "cpu":
            what = "%d CPU devices (polygpu host backend)" % len(devs)
        elif devs:
            what = "%s × %d" % (devs[0]["name"], len(devs))
        else:
            what = "?"
        dates = sorted({i.get("date", "?") for i in self.invocations})
        commits = sorted({str(i.get("commit", "?")) + ("+" if i.get("dirty") else "")
                          for i in self.invocations})
        out.append("Device: %s; host %s; date %s; commit %s (+: uncommitted changes); %d "
                   "invocation(s) of run.py. Times are the median of %s timed runs after %s "
                   "warm-ups (min and max are in the JSON), in milliseconds; (×k) is the speedup "
                   "over the same version on 1 %s (polygpu: with minmax-transfer-time). ✗: "
                   "failed validation or error (see the JSON).\n" % (
                       what, inv.get("host", "?"), ", ".join(dates), ", ".join(commits),
                       len(self.invocations), inv.get("runs", "?"), inv.get("warmup", "?"),
                       self.unit))
        out += self._summary()
        out += self._views_summary()
        for bench, mod in WORKLOADS.items():
            sizes = self.sizes_of(bench)
            if not sizes:
                continue
            out.append("\n## %s\n\n%s\n" % (mod.TITLE, mod.__doc__.strip().replace("\n", " ")))
            for s in sizes:
                out += self._bench_table(bench, s)
            out += self._sweep_table(bench)
        return "\n".join(out) + "\n"

    def _row_cells(self, bench, size, version, policy=None):
        one = self.pick(bench, size, version, 1, policy or DEFAULT_POLICY) or (
            self.pick(bench, size, version, 1, DEFAULT_POLICY) if version == "polygpu" else None)
        base = one["median_s"] if one else None
        cells = []
        for g in self.gpus:
            rs = [r for r in self.all if (r["bench"], r["size"], r["version"], r["gpus"]) ==
                  (bench, size, version, g) and r["partitions"] == self.parts[bench, size]
                  and (version not in POLICY_VERSIONS
                       or (r.get("policy") or DEFAULT_POLICY) == (policy or DEFAULT_POLICY))]
            if not rs:
                cells.append("")
            elif not rs[-1].get("valid"):
                cells.append("✗")
            else:
                t = rs[-1]["median_s"]
                sp = " (×%.2f)" % (base / t) if base and g > 1 else ""
                cells.append(fmt_ms(t) + sp)
        return cells

    def _bench_table(self, bench, size):
        mod = WORKLOADS[bench]
        sz = mod.SIZES[size]
        head = "| version | policy | " + " | ".join(self.gpus_word(g) for g in self.gpus) + " |"
        share = [r.get("memory_share") for r in self.all if (r["bench"], r["size"], r["gpus"]) ==
                 (bench, size, 1) and r.get("memory_share")]
        title = "\n### %s %s: %s, %d partitions%s\n" % (
            mod.TITLE, size, mod.describe(sz), self.parts[bench, size],
            "; device memory %s (%.0f%% of one GPU's)" % (
                fmt_gb(mod.device_bytes(sz)), 100 * share[0]) if share else "")
        rows = [title, head,
                "|" + " --- |" * (2 + len(self.gpus))]
        for v in VERSIONS:
            pols = (POLICIES if v == "polygpu"
                    else (DEFAULT_POLICY,) if v in POLICY_VERSIONS else (None,))
            for p in pols:
                cells = self._row_cells(bench, size, v, p)
                if any(cells):
                    rows.append("| %s | %s | %s |" % (
                        v + (" (bound, not validated)" if v == "polygpu-elided" else ""), p or "",
                        " | ".join(cells)))
        return rows

    def _sweep_table(self, bench):
        sw = [r for r in self.all if r["bench"] == bench and r.get("sweep")]
        if not sw:
            return []
        size = sw[0]["size"]
        parts = sorted({r["partitions"] for r in sw})
        gs = sorted({r["gpus"] for r in sw})
        rows = ["\n### %s %s: partitions sweep\n" % (WORKLOADS[bench].TITLE, size),
                "| version | %ss | " % self.unit + " | ".join("P=%d" % p for p in parts) + " |",
                "|" + " --- |" * (2 + len(parts))]
        for v in ("polygpu", "cuda"):
            for g in gs:
                cells = []
                for p in parts:
                    r = self.pick(bench, size, v, g, parts=p)
                    cells.append(fmt_ms(r["median_s"]) if r else "")
                if any(cells):
                    rows.append("| %s | %d | %s |" % (v, g, " | ".join(cells)))
        return rows

    def _paper_summary(self):
        """polygpu / tuned CUDA C at each of the paper's sizes and GPU counts, with the memory
        used, the untuned baseline and the speedups."""
        rows, at_max = [], {}
        for bench, mod in WORKLOADS.items():
            for s in PAPER_SIZES:
                for g in self.gpus:
                    pg_, cu = self.pick(bench, s, "polygpu", g), self.pick(bench, s, "cuda", g)
                    if not (pg_ and cu):
                        continue
                    # ablations against the tuned run of their own invocation (side by side)
                    un = self.pick(bench, s, "cuda-untuned", g)
                    st = self.pick(bench, s, "cuda-streams", g)
                    cu_un = self.same_run(un, "cuda")
                    cu_st = self.same_run(st, "cuda")
                    pg1, cu1 = self.pick(bench, s, "polygpu", 1), self.pick(bench, s, "cuda", 1)
                    ratio = pg_["median_s"] / cu["median_s"]
                    if s == "paper-max":
                        at_max.setdefault(g, []).append(ratio)
                    share = pg_.get("memory_share") or cu.get("memory_share")
                    rows.append("| %s | %s | %s | %s | %d | %s | %s | %.2f | %s | %s | %s |" % (
                        mod.TITLE, s, mod.describe(mod.SIZES[s]),
                        "%s (%.0f%%)" % (fmt_gb(mod.device_bytes(mod.SIZES[s])), 100 * share)
                        if share else fmt_gb(mod.device_bytes(mod.SIZES[s])), g,
                        fmt_ms(pg_["median_s"]), fmt_ms(cu["median_s"]), ratio,
                        "%.2f" % (un["median_s"] / cu_un["median_s"]) if cu_un else "–",
                        "%.2f / %.2f" % (pg1["median_s"] / pg_["median_s"],
                                         cu1["median_s"] / cu["median_s"])
                        if pg1 and cu1 and g > 1 else "–",
                        "%.2f" % (st["median_s"] / cu_st["median_s"]) if cu_st else "–"))
        if not rows:
            return []
        out = ["## At the paper's sizes, against the tuned CUDA C baselines\n",
               "Memory: device bytes of the workload over all GPUs (share of one GPU's memory "
               "per GPU). untuned / tuned: the first baseline's time over the tuned one's (>1: "
               "tuning made it faster). streams / graph: CG's tuned baseline issued on streams "
               "every run over the same captured as one CUDA graph. Both ablations are taken "
               "against the tuned run of the same run.py invocation.\n",
               "| bench | size | shape | memory | GPUs | polygpu ms | CUDA C ms | polygpu / CUDA C "
               "| CUDA C untuned / tuned | speedup polygpu / CUDA C | CG streams / graph |",
               "|" + " --- |" * 11] + rows
        for g in sorted(at_max):
            gm = geomean(at_max[g])
            out.append("\nGeomean of polygpu / CUDA C at paper-max on %s: **%.2f** (%.0f%% of "
                       "CUDA C speed, %d workloads)" % (self.gpus_word(g), gm, 100 / gm,
                                                      len(at_max[g])))
        return out + [""]

    def _summary(self):
        out = self._paper_summary()
        out += ["## Summary at %s\n" % self.gpus_word(self.maxg)]
        g = self.maxg
        rows, ratios = [], []
        for bench, mod in WORKLOADS.items():
            s = self.largest(bench)
            if not s:
                continue
            pg_, cu = self.pick(bench, s, "polygpu", g), self.pick(bench, s, "cuda", g)
            pg1, cu1 = self.pick(bench, s, "polygpu", 1), self.pick(bench, s, "cuda", 1)
            sy = self.pick(bench, s, "cuda-sync", 1)
            if not (pg_ and cu):
                continue
            ratio = pg_["median_s"] / cu["median_s"]
            ratios.append(ratio)
            rows.append("| %s | %s | %s | %s | %.2f (%.0f%% of CUDA C speed) | %s | %s | %s |" % (
                mod.TITLE, s, fmt_ms(pg_["median_s"]), fmt_ms(cu["median_s"]), ratio,
                100 / ratio,
                "%.2f" % (pg1["median_s"] / pg_["median_s"]) if pg1 else "–",
                "%.2f" % (cu1["median_s"] / cu["median_s"]) if cu1 else "–",
                fmt_ms(sy["median_s"]) if sy else "–"))
        if rows:
            out += ["| bench | size | polygpu ms | CUDA C ms | polygpu / CUDA C | polygpu speedup "
                    "1→%d | CUDA C speedup 1→%d | CUDA C sync, 1 GPU, ms |" % (g, g),
                    "| --- | --- | --- | --- | --- | --- | --- | --- |"] + rows
            gm = geomean(ratios)
            out.append("| geomean | | | | %.2f (%.0f%%) | | | |" % (gm, 100 / gm))
        else:
            out.append("(no benchmark has both a polygpu and a CUDA C result)")
        # policy ablation
        prow = []
        for bench, mod in WORKLOADS.items():
            s = self.largest(bench, need=("polygpu",))
            if not s:
                continue
            ref = self.pick(bench, s, "polygpu", g, DEFAULT_POLICY)
            if not ref:
                continue
            cells = []
            for p in POLICIES:
                r = self.pick(bench, s, "polygpu", g, p)
                cells.append("%.2f" % (r["median_s"] / ref["median_s"]) if r else "–")
            prow.append("| %s | %s | %s |" % (mod.TITLE, s, " | ".join(cells)))
        if prow and g > 1:
            out += ["\nPolicy ablation at %s: time / minmax-transfer-time time (>1: slower)\n"
                    % self.gpus_word(g), "| bench | size | " + " | ".join(POLICIES) + " |",
                    "|" + " --- |" * (2 + len(POLICIES))] + prow
        # versions: CuPy, Lua, Java vs polygpu Python
        vrow = []
        for bench in ("vec", "bs", "jacobi"):
            s = self.largest(bench, need=("polygpu",))
            if not s:
                continue
            base = self.pick(bench, s, "polygpu", g)
            cells = []
            for v in ("cupy", "lua", "java", "cuda"):
                r = self.pick(bench, s, v, g)
                cells.append("%s (%.2f)" % (fmt_ms(r["median_s"]), r["median_s"] / base["median_s"])
                             if r and base else "–")
            vrow.append("| %s | %s | %s | %s |" % (
                WORKLOADS[bench].TITLE, s, fmt_ms(base["median_s"]) if base else "–",
                " | ".join(cells)))
        if vrow:
            out += ["\nOther versions at %s: ms (time / polygpu Python time)\n" % (
                self.gpus_word(g)),
                "| bench | size | polygpu Python | CuPy | polygpu Lua | polygpu Java | CUDA C |",
                "| --- | --- | --- | --- | --- | --- | --- |"] + vrow
        bad = [r for r in self.all if not r.get("valid")]
        if bad:
            out.append("\n%d configuration(s) failed or did not validate:\n" % len(bad))
            for r in bad[:40]:
                out.append("- %s %s %s %s %s P=%d: %s" % (
                    r["bench"], r["size"], r["version"], r.get("policy") or "",
                    self.gpus_word(r["gpus"]), r["partitions"], (r.get("error") or r.get("check") or "")[:300].replace(
                        "\n", " ")))
        return out

    def _views_summary(self):
        """The views workloads: each variant against its one-array-per-partition workload, and
        the bytes moved and the infinite-bandwidth bound (polygpu-elided) per configuration."""
        out = []
        rows = []
        for bench, mod in WORKLOADS.items():
            base = getattr(mod, "BASE", None)
            if not base:
                continue
            for s in self.sizes_of(bench):
                for g in self.gpus:
                    v, a = self.pick(bench, s, "polygpu", g), self.pick(base, s, "polygpu", g)
                    if not (v and a):
                        continue
                    rows.append("| %s | %s | %d | %s | %s | %.2f | %s | %s |" % (
                        mod.TITLE, s, g, fmt_ms(a["median_s"]), fmt_ms(v["median_s"]),
                        v["median_s"] / a["median_s"], fmt_bytes(device_link_bytes(a)),
                        fmt_bytes(device_link_bytes(v))))
        if rows:
            out += ["\n## Views against one array per partition\n",
                    "polygpu (%s) on views of one matrix and one result array against the same "
                    "workload with an array per partition; bytes: between devices in the last "
                    "timed run.\n" % DEFAULT_POLICY,
                    "| bench | size | %ss | arrays ms | views ms | views / arrays | arrays bytes "
                    "| views bytes |" % self.unit, "|" + " --- |" * 8] + rows
        rows = []
        for bench, mod in WORKLOADS.items():
            for s in self.sizes_of(bench):
                sz = mod.SIZES[s]
                for g in self.gpus:
                    r = self.pick(bench, s, "polygpu", g)
                    e = self.pick(bench, s, "polygpu-elided", g)
                    if not (r and e):
                        continue
                    p = r["partitions"]
                    moved = device_link_bytes(r)
                    whole = (mod.whole_array_bytes(sz, g, p)
                             if hasattr(mod, "whole_array_bytes") else None)
                    least = (mod.whole_array_min_bytes(sz, g, p)
                             if hasattr(mod, "whole_array_min_bytes") else None)
                    halo = mod.halo_bytes(sz, g, p) if hasattr(mod, "halo_bytes") else None
                    t, te = r["median_s"], e["median_s"]
                    tc = (r.get("copy_time") or {}).get("max_device_s")
                    rows.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                        mod.TITLE, s, g, fmt_ms(t), fmt_ms(te), "%.2f" % (t / te),
                        fmt_bytes(moved), fmt_bytes(halo) if halo is not None else "–",
                        "%s (%.0f×)" % (fmt_bytes(whole), whole / moved) if whole and moved
                        else (fmt_bytes(whole) if whole else "–"),
                        "%s (%.0f×)" % (fmt_bytes(least), least / moved) if least and moved
                        else (fmt_bytes(least) if least else "–"),
                        fmt_ms(tc) if tc else "–",
                        "%.2f" % (1 - (t - te) / tc) if tc else "–"))
        if rows:
            out += ["\n## Views: bytes moved and the infinite-bandwidth bound\n",
                    "polygpu (%s) against polygpu-elided, the same on a runtime that skips every "
                    "copy (elide_copies: values wrong, not validated): polygpu / bound is the "
                    "cost of moving data. Bytes: between devices in the last timed run; ideal "
                    "halo: one row each way per sweep and boundary between devices (contiguous "
                    "partitions); whole-array: the same with one array per grid and no views, "
                    "the issue's model (every partition receives the whole grid it reads every "
                    "sweep) and the least it could be (2 (G-1) grids per sweep), with the factor "
                    "over the bytes moved. T copy: the copies of one run, timed (a traced run), "
                    "summed per device, the largest; hidden = 1 - (T - T elided) / T copy, the "
                    "share of the copy time that overlaps other work (noisy: a difference of "
                    "medians).\n" % DEFAULT_POLICY,
                    "| bench | size | %ss | polygpu ms | bound ms | polygpu / bound | bytes moved "
                    "| ideal halo | whole-array (model) | whole-array (least) | T copy ms "
                    "| hidden |" % self.unit, "|" + " --- |" * 12] + rows
        return out

    # ---------------------------------------------------------------- plots
    def plots(self, stem):
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            log("matplotlib is not installed: plots skipped (pip install matplotlib)")
            return []
        written = []
        for name, fn in (("speedup", self._plot_speedup), ("ratio", self._plot_ratio),
                         ("policies", self._plot_policies), ("mul-partitions", self._plot_sweep),
                         ("versions", self._plot_versions)):
            fig = fn(plt)
            if fig is None:
                continue
            path = "%s-%s.png" % (stem, name)
            fig.savefig(path, dpi=110, bbox_inches="tight")
            plt.close(fig)
            written.append(path)
        return written

    def _grid(self, plt, n):
        cols = min(n, 3)
        rows = (n + cols - 1) // cols
        fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False,
                                 constrained_layout=True)
        for ax in axes.flat[n:]:
            ax.set_visible(False)
        return fig, list(axes.flat)

    def _plot_speedup(self, plt):
        benches = [b for b in WORKLOADS if self.sizes_of(b)]
        if not benches or len(self.gpus) < 2:
            return None
        fig, axes = self._grid(plt, len(benches))
        for ax, b in zip(axes, benches):
            for i, s in enumerate(self.sizes_of(b)):
                for v, style in (("polygpu", "-o"), ("cuda", "--s")):
                    base = self.pick(b, s, v, 1)
                    pts = [(g, base["median_s"] / r["median_s"]) for g in self.gpus
                           for r in [self.pick(b, s, v, g)] if r and base]
                    if len(pts) > 1:
                        ax.plot(*zip(*pts), style, color="C%d" % i, label="%s %s" % (v, s))
            ax.plot(self.gpus, self.gpus, ":", color="grey", linewidth=0.8)
            ax.set_title("%s: speedup vs %ss" % (WORKLOADS[b].TITLE, self.unit))
            ax.set_xlabel(self.unit + "s")
            ax.set_xticks(self.gpus)
            ax.set_ylabel("speedup over 1 " + self.unit)
            ax.legend(fontsize=7)
        return fig

    def _plot_ratio(self, plt):
        benches = [b for b in WORKLOADS if self.largest(b)]
        if not benches:
            return None
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * (len(benches) + 1)), 3.8),
                               constrained_layout=True)
        width = 0.8 / len(self.gpus)
        for j, g in enumerate(self.gpus):
            vals = []
            for b in benches:
                s = self.largest(b)
                p, c = self.pick(b, s, "polygpu", g), self.pick(b, s, "cuda", g)
                vals.append(p["median_s"] / c["median_s"] if p and c else float("nan"))
            gm = geomean([v for v in vals if v == v])
            xs = [i + (j - (len(self.gpus) - 1) / 2) * width for i in range(len(benches) + 1)]
            ax.bar(xs, vals + [gm or float("nan")], width, label=self.gpus_word(g),
                   color=plt.cm.viridis(j / max(1, len(self.gpus) - 1)))
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.axhline(1 / 0.95, color="red", linewidth=0.8, linestyle="--", label="95% target")
        ax.set_xticks(range(len(benches) + 1))
        ax.set_xticklabels(["%s\n%s" % (WORKLOADS[b].TITLE, self.largest(b)) for b in benches]
                           + ["geomean"])
        ax.set_ylabel("polygpu time / CUDA C time")
        ax.set_title("polygpu (minmax-transfer-time) vs hand-written CUDA C (lower is better)")
        ax.legend(fontsize=7, ncol=min(len(self.gpus) + 1, 5))
        return fig

    def _plot_policies(self, plt):
        g = self.maxg
        benches = [b for b in WORKLOADS if self.largest(b, need=("polygpu",))]
        if g < 2 or not benches:
            return None
        fig, ax = plt.subplots(figsize=(max(6, 1.8 * len(benches)), 3.8), constrained_layout=True)
        width = 0.8 / len(POLICIES)
        for j, p in enumerate(POLICIES):
            vals = []
            for b in benches:
                s = self.largest(b, need=("polygpu",))
                ref = self.pick(b, s, "polygpu", g, DEFAULT_POLICY)
                r = self.pick(b, s, "polygpu", g, p)
                vals.append(r["median_s"] / ref["median_s"] if r and ref else float("nan"))
            xs = [i + (j - (len(POLICIES) - 1) / 2) * width for i in range(len(benches))]
            ax.bar(xs, vals, width, label=p)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(benches)))
        ax.set_xticklabels(["%s\n%s" % (WORKLOADS[b].TITLE, self.largest(b, need=("polygpu",)))
                            for b in benches])
        ax.set_ylabel("time / minmax-transfer-time")
        ax.set_title("Policy ablation, %s (lower is better)" % self.gpus_word(g))
        ax.legend(fontsize=7, ncol=3)
        return fig

    def _plot_sweep(self, plt):
        sw = [r for r in self.ok if r["bench"] == "mul" and r.get("sweep")]
        if not sw:
            return None
        size = sw[0]["size"]
        fig, ax = plt.subplots(figsize=(6, 3.8), constrained_layout=True)
        for v, style in (("polygpu", "-o"), ("cuda", "--s")):
            for i, g in enumerate(sorted({r["gpus"] for r in sw})):
                pts = sorted((r["partitions"], r["median_s"] * 1e3) for r in sw
                             if r["version"] == v and r["gpus"] == g)
                if pts:
                    ax.plot(*zip(*pts), style, color="C%d" % i,
                            label="%s, %s" % (v, self.gpus_word(g)))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("partitions")
        ax.set_ylabel("ms")
        ax.set_title("MUL %s: time vs number of partitions" % size)
        ax.legend(fontsize=7)
        return fig

    def _plot_versions(self, plt):
        benches = [b for b in ("vec", "bs", "jacobi") if self.largest(b, need=("polygpu",))]
        if not benches:
            return None
        versions = ("polygpu", "lua", "java", "cupy", "cuda")
        names = {"polygpu": "polygpu Python", "lua": "polygpu Lua", "java": "polygpu Java",
                 "cupy": "CuPy", "cuda": "CUDA C"}
        fig, axes = self._grid(plt, len(benches))
        for ax, b in zip(axes, benches):
            s = self.largest(b, need=("polygpu",))
            width = 0.8 / len(versions)
            for j, v in enumerate(versions):
                vals = [self.pick(b, s, v, g) for g in self.gpus]
                xs = [i + (j - (len(versions) - 1) / 2) * width for i in range(len(self.gpus))]
                ax.bar(xs, [r["median_s"] * 1e3 if r else float("nan") for r in vals], width,
                       label=names[v])
            ax.set_xticks(range(len(self.gpus)))
            ax.set_xticklabels([str(g) for g in self.gpus])
            ax.set_xlabel(self.unit + "s")
            ax.set_ylabel("ms")
            ax.set_title("%s %s: languages and libraries" % (WORKLOADS[b].TITLE, s))
            ax.legend(fontsize=7)
        return fig


def device_link_bytes(rec):
    """Bytes moved between devices (host links left out) in a result's last timed run."""
    links = (rec.get("stats_last_run") or {}).get("link_bytes", {})
    return sum(v for k, v in links.items() if "host" not in k.split("->"))


def write_report(results, invocations, out_dir, name, plots=True):
    rep = Report(results, invocations, name)
    md = os.path.join(out_dir, name + ".md")
    with open(md, "w") as f:
        f.write(rep.markdown())
    written = [md]
    if plots:
        written += rep.plots(os.path.join(out_dir, name))
    return written


# ================================================================ planning

def parse_list(s, allowed=None, what="value"):
    items = [x.strip() for x in s.split(",") if x.strip()]
    if allowed is not None:
        bad = [x for x in items if x not in allowed]
        if bad:
            sys.exit("run.py: unknown %s %s (choose from %s)" % (
                what, ", ".join(bad), ", ".join(allowed)))
    return items


def default_partitions(mod, size_name):
    """A benchmark's partitions at a size (B&S at the paper's sizes: its 24 vectors)."""
    return getattr(mod, "PARTITIONS_BY_SIZE", {}).get(size_name, mod.PARTITIONS)


def expand_sizes(text):
    """The --sizes list, with "paper" for the paper's three sizes."""
    out = []
    for s in parse_list(text):
        out += list(PAPER_SIZES) if s == "paper" else [s]
    return parse_list(",".join(out), SIZES, "size")


def plan_all(args, benches, sizes, gpu_counts, versions, policies):
    plans = []
    for b in benches:
        mod = WORKLOADS[b]
        for s in sizes:
            if s not in mod.SIZES:
                continue
            nparts = args.partitions or default_partitions(mod, s)
            for g in gpu_counts:
                for v in versions:
                    if not has_version(b, v):
                        continue
                    if v == "cuda-sync" and g != 1:
                        continue
                    if v == "polygpu":
                        # on one device every policy makes the same choice
                        one = [p for p in policies if p == DEFAULT_POLICY] or policies[:1]
                        pols = policies if g > 1 else one
                        for p in pols:
                            plans.append(Plan(b, s, v, g, nparts, p))
                    elif v in POLICY_VERSIONS:
                        plans.append(Plan(b, s, v, g, nparts, DEFAULT_POLICY))
                    else:
                        plans.append(Plan(b, s, v, g, nparts))
        if b == "mul" and args.mul_sweep != "none":
            sweep_sizes = [args.mul_sweep_size] if args.mul_sweep_size else sizes[:1]
            gs = sorted({1, max(gpu_counts)})
            for s in sweep_sizes:
                for p in parse_list(args.mul_sweep):
                    for g in gs:
                        for v in ("polygpu", "cuda"):
                            if v in versions:
                                plans.append(Plan(b, s, v, g, int(p),
                                                  DEFAULT_POLICY if v == "polygpu" else None,
                                                  sweep=True))
    seen, out = set(), []
    for p in plans:  # the sweep repeats the default partitions: keep the first
        if p.key() not in seen:
            seen.add(p.key())
            out.append(p)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--bench", default=",".join(WORKLOADS),
                    help="benchmarks: %s (default all)" % ",".join(WORKLOADS))
    ap.add_argument("--sizes", help="tiny,small,medium,large,paper (paper: the GrCUDA paper's "
                                    "range, paper-min,paper-mid,paper-max; default "
                                    "small,medium,large on GPUs, tiny on CPU devices)")
    ap.add_argument("--devices", help="'cuda' (every GPU, default when there is one), "
                                      "'cuda:0,1', or 'host:N' (N CPU devices)")
    ap.add_argument("--gpus", help="device counts to run, e.g. 1,2,4 (default 1, 2, 4, 8 up to "
                                   "the number of devices, and that number)")
    ap.add_argument("--versions", help="polygpu,polygpu-elided,cuda,cuda-untuned,cuda-streams,"
                                       "cuda-sync,cupy,lua,java (default: all on GPUs, polygpu "
                                       "on CPU devices)")
    ap.add_argument("--policies", default="all", help="polygpu device policies (default all "
                                                      "six; 1 GPU runs only %s)" % DEFAULT_POLICY)
    ap.add_argument("--partitions", type=int, help="partitions (default: each benchmark's, 16)")
    ap.add_argument("--mul-sweep", default="1,2,4,8,16,32",
                    help="MUL partition counts to sweep on 1 and the most GPUs ('none': no sweep)")
    ap.add_argument("--mul-sweep-size", help="the sweep's size (default: the first of --sizes)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--fetch", choices=("serial", "threads"), default="serial",
                    help="polygpu Python: host reads of the results one after the other "
                         "(default), or from a thread pool so that copies overlap")
    ap.add_argument("--out-dir", help="default benchmarks/results on GPUs, "
                                      "/tmp/polygpu-bench on CPU devices")
    ap.add_argument("--name", help="file stem (default <device>-<date>)")
    ap.add_argument("--merge", nargs="*", default=[],
                    help="earlier results files to merge in (besides <out-dir>/<name>.json)")
    ap.add_argument("--report-only", action="store_true",
                    help="only rebuild the Markdown and plots from the JSON (needs --name)")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--trace", metavar="DIR",
                    help="also write a Chrome trace and DAG of one run per polygpu configuration")
    ap.add_argument("--build-dir", help="polygpu build tree (default build-gpu/ or build/)")
    ap.add_argument("--build", choices=("auto", "always", "never"), default="auto",
                    help="build polygpu when its Python module is missing (auto)")
    ap.add_argument("--source-dir", help="polygpu sources to build (default: this checkout)")
    ap.add_argument("--commit", help="the commit to record (default: git's; on a GPU machine "
                                     "pass the one that was benchmarked)")
    ap.add_argument("--arch", help="nvcc -arch for the baselines (default: from the GPU, "
                                   "e.g. sm_90)")
    ap.add_argument("--time-budget", type=float, default=540,
                    help="seconds: start no configuration after this (default 540, inside the "
                         "device tool's 10 minutes); what ran is saved")
    ap.add_argument("--resume", action="store_true",
                    help="skip configurations that already have a valid result in the JSON "
                         "(to go on after a time budget ran out)")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.time()

    if args.report_only:
        if not args.name:
            sys.exit("run.py: --report-only needs --name")
        out_dir = args.out_dir or os.path.join(HERE, "results")
        invocations, results = load_results([os.path.join(out_dir, args.name + ".json")]
                                            + args.merge)
        for p in write_report(results, invocations, out_dir, args.name, not args.no_plots):
            log("wrote", p)
        return 0

    benches = parse_list(args.bench, WORKLOADS, "benchmark")
    build_dir = find_build_dir(args.build_dir)
    pg = import_polygpu(build_dir, args.build, os.path.abspath(args.source_dir or ROOT))
    os.environ.setdefault("PG_CACHE_DIR", os.path.join(build_dir, "kernel-cache"))

    spec = args.devices
    if spec and spec.startswith("sim:") and "compute=" not in spec:
        # Timing only (by the environment: the devices option holds 127 characters): the
        # suite's sizes are the simulated machine's, not this host's memory, and values are
        # never validated on simulated devices anyway.
        os.environ.setdefault("PG_SIM_COMPUTE", "none")
    workloads.common.TIMING_ONLY = bool(spec) and spec.startswith("sim:") and (
        "compute=none" in spec or
        ("compute=" not in spec and os.environ.get("PG_SIM_COMPUTE") == "none"))
    if not spec:
        try:
            device_info(pg, "cuda")
            spec = "cuda"
        except pg.Error:
            spec = "host:4"
    devs = device_info(pg, spec)
    cpu = devs[0]["kind"] == "cpu"
    Plan.unit = "device" if cpu else "GPU"
    ndev = len(devs)
    if spec.startswith("host"):
        device_specs = {k: "host:%d" % k for k in range(1, ndev + 1)}
    elif spec.startswith("sim:"):  # a simulated machine: all its GPUs (a preset per GPU count)
        device_specs = {ndev: spec}
    else:
        ids = [d["id"] for d in devs] if spec == "cuda" else [
            int(x) for x in spec.split(":", 1)[1].split(",")]
        device_specs = {k: "cuda:" + ",".join(str(i) for i in ids[:k]) for k in range(1, ndev + 1)}
    gpu_counts = ([int(x) for x in parse_list(args.gpus)] if args.gpus else
                  sorted({g for g in (1, 2, 4, 8) if g <= ndev} | {ndev}))
    bad = [g for g in gpu_counts if g not in device_specs]
    if bad:
        sys.exit("run.py: %s device(s) asked for, %d present" % (bad, ndev))
    sizes = expand_sizes(args.sizes or ("tiny" if cpu else "small,medium,large"))
    versions = parse_list(args.versions or ("polygpu" if cpu else ",".join(VERSIONS)), VERSIONS,
                          "version")
    if cpu and set(versions) - set(POLICY_VERSIONS):
        log("CPU devices: only the polygpu versions run (CUDA C and CuPy need GPUs)")
        versions = [v for v in versions if v in POLICY_VERSIONS]
    policies = (list(POLICIES) if args.policies == "all"
                else parse_list(args.policies, POLICIES, "policy"))
    plans = plan_all(args, benches, sizes, gpu_counts, versions, policies)

    date = datetime.date.today().isoformat()
    name = args.name or "%s-%s" % (device_slug(devs), date)
    out_dir = args.out_dir or ("/tmp/polygpu-bench" if cpu else os.path.join(HERE, "results"))
    os.makedirs(out_dir, exist_ok=True)
    out_json = os.path.join(out_dir, name + ".json")
    if args.list:
        for p in plans:
            print(p.label())
        print("%d configurations -> %s" % (len(plans), out_json))
        return 0

    arch = args.arch
    if not arch and not cpu:
        cc = devs[0].get("compute_capability") or (9, 0)
        arch = "sm_%d%d" % tuple(cc)
    tools = Tools(build_dir, benches, set(versions), arch or "sm_90")
    for v, why in tools.why.items():
        log("%s versions skipped: %s" % (v, why))
    avail = {"cuda": tools.cuda, "cuda-sync": tools.cuda, "cuda-streams": tools.cuda,
             "cuda-untuned": tools.cuda_untuned, "cupy": tools.cupy, "lua": tools.lua,
             "java": tools.java}
    plans = [p for p in plans if p.version in PYTHON_VERSIONS or (
        avail[p.version] and (p.version not in CUDA_VERSIONS or p.bench in avail[p.version]))]

    invocations, results = load_results(args.merge + [out_json])
    commit, dirty = git_commit(args.commit)
    invocations.append({
        "argv": sys.argv[1:] if argv is None else argv, "date": date,
        "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit, "dirty": dirty, "devices": [
            {k: d.get(k) for k in ("id", "kind", "name", "memory_bytes", "compute_capability",
                                   "multiprocessors")} for d in devs],
        "device_spec": spec, "host": platform.node(), "cpus": os.cpu_count(),
        "python": platform.python_version(), "numpy": np.__version__,
        "polygpu": pg.__version__, "warmup": args.warmup, "runs": args.runs,
        "fetch": args.fetch, "skipped_versions": tools.why})
    ctx = {"args": args, "pg": pg, "tools": tools, "device_specs": device_specs,
           "invocation": len(invocations) - 1,
           "ref_cache": os.environ.get("PGB_REF_CACHE") or os.path.join(
               os.path.expanduser("~"), ".cache", "polygpu-bench"),
           "timeout": lambda: max(30.0, args.time_budget + 50 - (time.time() - t0))}
    mem = min(d["memory_bytes"] for d in devs)
    ctx["gpu_memory"] = None if cpu else mem
    log("run.py: %d configurations on %s (%d device%s), results -> %s" % (
        len(plans), spec, ndev, "" if ndev == 1 else "s", out_json))
    done = failed = 0
    skipped = []
    for i, plan in enumerate(plans):
        if time.time() - t0 > args.time_budget:
            skipped = plans[i:]
            break
        mod = WORKLOADS[plan.bench]
        need = mod.device_bytes(mod.SIZES[plan.size_name]) / plan.gpus
        if not cpu and need > MEMORY_SHARE * mem:
            log("[%d/%d] %s: skipped, needs %.1f GB per GPU, over %.0f%% of %.1f GB" % (
                i + 1, len(plans), plan.label(), need / 1e9, 100 * MEMORY_SHARE, mem / 1e9))
            continue
        old = results.get(plan.key())
        if args.resume and old and old.get("valid"):
            log("[%d/%d] %s: already in the results (--resume)" % (
                i + 1, len(plans), plan.label()))
            continue
        rec = execute(plan, ctx)
        results[result_key(rec)] = rec
        save_results(out_json, name, invocations, results)
        done += 1
        if rec.get("valid"):
            log("[%d/%d] %s: %s ms median (%s-%s), %s  [%.0f s]" % (
                i + 1, len(plans), plan.label(), fmt_ms(rec["median_s"]), fmt_ms(rec["min_s"]),
                fmt_ms(rec["max_s"]), rec["check"], time.time() - t0))
        else:
            failed += 1
            log("[%d/%d] %s: FAILED: %s" % (
                i + 1, len(plans), plan.label(), rec.get("error") or rec.get("check")))
    if skipped:
        log("time budget spent: %d configuration(s) not run, first: %s" % (
            len(skipped), skipped[0].label()))
    for p in write_report(results, invocations, out_dir, name, not args.no_plots):
        log("wrote", p)
    log("run.py: %d run, %d failed or invalid, %d not run for time, %.0f s" % (
        done, failed, len(skipped), time.time() - t0))
    print("%d passed, %d failed" % (done - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
