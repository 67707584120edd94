#!/usr/bin/env python3
"""Run a program on a SIMULATED cluster: N ranks as processes of this machine, each with
simulated GPUs of its node (devices="sim:..."), their messages costing the cluster's network in
virtual time (net/sim_transport.c). The same program as under mpirun, unchanged:

    python3 tools/sim_cluster.py --cluster dgx-a100x4 --ranks 16 [--profile P] [--compute none]
        [--net key=value,...] [--host-time 1] -- python3 benchmarks/mpi/cg_dist.py --size large

A cluster (devices/sim/presets/NAME.cluster, or a file's path) says:

    name dgx-a100x4
    nodes 4                 # nodes
    ranks_per_node 8        # ranks on each node (one per GPU); rank r is on node r // 8
    node dgx-a100 1         # each rank's devices: the first 1 GPU(s) of this machine (a .topo)
    network intra_us=0.5 intra_gbps=8 inter_us=1.5 inter_gbps=24 nic_ranks=1 overhead_us=0.5

(network: net/sim_transport.c). Each rank gets PG_DEVICES="sim:<its topology>,host_clock=cpu
[,compute=none,reads=any]": host_clock=cpu because N ranks share this machine's cores (a rank's
host time is its own thread's CPU time), and with --compute none the kernels are timed, not run,
so a read returns no computed value (reads=any: the script's reads of its results do not fail;
their values mean nothing). Times are the simulator's virtual clock (pg_runtime_clock, Python
rt.clock()): PREDICTIONS, not measurements. A rank that exits with a nonzero status ends the
others (as mpirun does); the launcher's status is the first nonzero one.
"""
import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PRESETS = os.path.join(ROOT, "devices", "sim", "presets")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import sim_topo  # noqa: E402  (benchmarks/sim_topo.py: a machine's first N GPUs)

NET_KEYS = ("intra_us", "intra_gbps", "inter_us", "inter_gbps", "nic_ranks", "overhead_us",
            "eager_bytes")


def cluster_path(name):
    if "/" in name or name.endswith(".cluster"):
        return name
    return os.path.join(PRESETS, name + ".cluster")


def read_cluster(name):
    """The cluster file as a dict: name, nodes, ranks_per_node, node (machine, gpus), network
    (a dict). Errors name the file and line."""
    path = cluster_path(name)
    c = {"path": path}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            w = shlex.split(line, comments=True)
            if not w:
                continue
            where = "%s:%d" % (path, no)
            try:
                if w[0] == "name" and len(w) == 2:
                    c["name"] = w[1]
                elif w[0] in ("nodes", "ranks_per_node") and len(w) == 2 and int(w[1]) >= 1:
                    c[w[0]] = int(w[1])
                elif w[0] == "node" and len(w) == 3 and int(w[2]) >= 1:
                    c["node"] = (w[1], int(w[2]))
                elif w[0] == "network" and len(w) > 1:
                    net = dict(x.split("=", 1) for x in w[1:])
                    for k, v in net.items():
                        if k not in NET_KEYS or float(v) < 0:
                            raise ValueError(k)
                    c["network"] = net
                else:
                    raise ValueError(w[0])
            except ValueError:
                raise SystemExit("%s: not understood: %s" % (where, line.strip()))
    for k in ("name", "nodes", "ranks_per_node", "node", "network"):
        if k not in c:
            raise SystemExit("%s: no '%s' line" % (path, k))
    missing = [k for k in NET_KEYS if k not in c["network"]]
    if missing:
        raise SystemExit("%s: network lacks %s" % (path, ", ".join(missing)))
    return c


def net_string(net):
    return ",".join("%s=%s" % (k, net[k]) for k in NET_KEYS)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--cluster", required=True, help="a preset (devices/sim/presets/*.cluster) or file")
    ap.add_argument("--ranks", type=int, required=True, help="ranks (at most nodes x ranks_per_node)")
    ap.add_argument("--profile", default=os.environ.get("PG_SIM_PROFILE", ""),
                    help="the kernels' timing profile (default $PG_SIM_PROFILE)")
    ap.add_argument("--compute", choices=("cpu", "none"), default="cpu",
                    help="cpu: kernels also run (values right); none: timed only (default cpu)")
    ap.add_argument("--host-time", default="1", help="the simulator's host_time (default 1)")
    ap.add_argument("--net", default="", help="network keys replacing the cluster's: k=v,...")
    ap.add_argument("--timeout", type=float, default=0, help="end every rank after this many "
                    "seconds, real time (0: none)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER, help="-- the program and its arguments")
    a = ap.parse_args(argv)
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no program given (after --)")
    c = read_cluster(a.cluster)
    net = dict(c["network"])
    if a.net:
        for kv in a.net.split(","):
            k, _, v = kv.partition("=")
            if k not in NET_KEYS:
                ap.error("--net: unknown key %r (%s)" % (k, ", ".join(NET_KEYS)))
            net[k] = v
    cap = c["nodes"] * c["ranks_per_node"]
    if not 1 <= a.ranks <= cap:
        ap.error("--ranks %d: %s has %d nodes x %d ranks = %d" %
                 (a.ranks, c["name"], c["nodes"], c["ranks_per_node"], cap))
    # Short: a Unix socket's path holds ~100 characters.
    tmp = tempfile.mkdtemp(prefix="pgsc", dir="/tmp")
    procs = []

    def stop(signum, frame):  # ended by a signal: end the ranks too (the finally below)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    try:
        machine, gpus = c["node"]
        topo = os.path.join(tmp, "node.topo")
        sim_topo.subset(machine, gpus, topo)
        dev = "sim:%s,host_clock=cpu,host_time=%s" % (topo, a.host_time)
        if a.compute == "none":
            dev += ",compute=none,reads=any"
        env = dict(os.environ)
        for k in list(env):  # not an MPI job: no launcher's variables may mislead the runtime
            if k.startswith(("OMPI_", "PMI_", "PMIX_", "SLURM_")):
                del env[k]
        env.update(PG_SIMNET_DIR=tmp, PG_SIMNET_SIZE=str(a.ranks),
                   PG_SIMNET_NODE_RANKS=str(c["ranks_per_node"]), PG_SIMNET=net_string(net),
                   PG_DEVICES=dev)
        if a.profile:
            env["PG_SIM_PROFILE"] = os.path.abspath(a.profile)
        for r in range(a.ranks):
            e = dict(env, PG_SIMNET_RANK=str(r))
            procs.append(subprocess.Popen(cmd, env=e))
        status, t0 = 0, time.monotonic()
        live = list(procs)
        while live:
            for p in list(live):
                rc = p.poll()
                if rc is None:
                    continue
                live.remove(p)
                if rc != 0 and status == 0:
                    status = rc if rc > 0 else 128 - rc
                    print("sim_cluster: rank %d ended with status %d: ending the others" %
                          (procs.index(p), rc), file=sys.stderr)
            if status and live:
                break
            if a.timeout and time.monotonic() - t0 > a.timeout:
                print("sim_cluster: %.0f s passed (--timeout): ending every rank" % a.timeout,
                      file=sys.stderr)
                status = 124
                break
            time.sleep(0.02)
        return status
    finally:
        for p in procs:  # only our own children, by their ids
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
