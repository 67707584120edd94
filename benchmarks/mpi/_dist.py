"""Shared pieces of the distributed benchmarks (cg_dist.py, jacobi_dist.py): the command line,
the runtime, the block owners of partitions, the timing loop and the JSON line.

Every rank runs the whole script; partition i of P lives on rank ``i * nranks // P`` (the block
distribution of ``DeviceArray.split``). P does not depend on the number of ranks, so 1 and N
ranks compute the same thing in the same order (the checksum printed is the same)."""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # benchmarks/: the workloads package

import polygpu as pg  # noqa: E402


def parse(description, sizes, default_size, default_parts):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--size", default=default_size, choices=sorted(sizes),
                    help="a named size (default %(default)s)")
    ap.add_argument("--n", type=int, help="the order (overrides --size)")
    ap.add_argument("--iterations", type=int, help="iterations (sweeps) per run")
    ap.add_argument("--parts", type=int, default=default_parts,
                    help="partitions of the rows, whatever the ranks (default %(default)s)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs (default 1)")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs (default 5)")
    ap.add_argument("--devices", default=os.environ.get("PG_DEVICES", "auto"),
                    help="this rank's devices (default $PG_DEVICES, else auto)")
    ap.add_argument("--policy", default=None, help="the device policy (default polygpu's)")
    ap.add_argument("--label", default="", help="a free label copied to the JSON line")
    ap.add_argument("--no-check", action="store_true", help="skip the NumPy check")
    a = ap.parse_args()
    n, it = sizes[a.size]
    a.n = a.n or n
    a.iterations = a.iterations or it
    return a


_simulated = False  # the runtime's devices are simulated: times are its virtual clock's


def runtime(args):
    global _simulated
    _simulated = str(args.devices).startswith("sim:")
    kw = {"devices": args.devices}
    if args.policy:
        kw["policy"] = args.policy
    return pg.Runtime(**kw)


def owner(i, nparts, nranks):
    """The rank of partition i: blocks of partitions per rank."""
    return i * nranks // nparts


def timed(rt, run, warmup, repeats):
    """Seconds of each timed run (warm-up runs first). Each run ends in a host read, which every
    rank makes (a broadcast from the owners), so the ranks leave a run together."""
    # On simulated devices (a simulated cluster: tools/sim_cluster.py) the runtime's clock is
    # virtual time, the prediction; elsewhere it is real time, as perf_counter.
    clock = rt.clock if _simulated else time.perf_counter
    for _ in range(warmup):
        run()
    out = []
    for _ in range(repeats):
        t0 = clock()
        run()
        out.append(clock() - t0)
    return out


def report(rt, bench, args, runs, per_run, checksum, ok, message, extra=None):
    """Rank 0 prints the JSON line; every rank returns whether its check passed."""
    st = rt.stats()
    line = {"bench": bench, "version": "polygpu", "ranks": rt.nranks,
            "devices": [d["name"] if isinstance(d, dict) else str(d) for d in rt.devices],
            "devices_option": args.devices, "n": args.n, "iterations": args.iterations,
            "parts": args.parts, "repeats": len(runs),
            "s_per_iter": statistics.median(runs) / per_run,
            "s_per_run": statistics.median(runs), "runs_s": [round(t, 6) for t in runs],
            "checksum": checksum, "ok": ok, "check": message,
            "rank0_messages_sent": st.get("rank_messages_sent", 0),
            "rank0_bytes_sent": st.get("rank_bytes_sent", 0),
            "rank0_bytes_received": st.get("rank_bytes_received", 0),
            "label": args.label}
    line.update(extra or {})
    if rt.rank == 0:
        print(json.dumps(line), flush=True)
    return ok


def reference(mod, size):
    """``mod.reference(size)`` (workloads cg or jacobi), kept in $PGB_REF_CACHE (a directory)
    when set: the large sizes' NumPy references take seconds, and mpi_bench.sh checks the same
    size several times."""
    import numpy as np

    cache = os.environ.get("PGB_REF_CACHE")
    path = None
    if cache:
        os.makedirs(cache, exist_ok=True)
        path = os.path.join(cache, "%s-%d-%d.npz" % (mod.NAME, size[0], size[1]))
        if os.path.exists(path):
            with np.load(path) as z:
                return {k: z[k] for k in z.files}
    ref = mod.reference(size)
    if path:
        tmp = path + ".%d.tmp.npz" % os.getpid()
        np.savez(tmp, **ref)
        os.replace(tmp, path)
    return ref
