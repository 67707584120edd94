#!/usr/bin/env python3
"""Topology files (`*.topo`, devices/sim/README.md) for the simulated devices, made from others.

    python3 benchmarks/sim_topo.py subset PRESET_OR_FILE N --out FILE
        the first N GPUs of a machine (their links, switches and host links as they are): the
        1-, 2- and 4-GPU steps of a scaling study on one machine (the GPUs of a DGX-1's first
        quad, as a job given N GPUs of it would get).

    python3 benchmarks/sim_topo.py from-bandwidth CSV --out FILE --like PRESET_OR_FILE
            [--name NAME] [--gpu-name NAME] [--memory BYTES] [--sms N] [--cc X.Y]
            [--memory-gbps N] [--copy-us US]
        a machine someone has, from the interconnect CSV polygpu-bandwidth wrote on it
        (src,dst,bandwidth_gbps,latency_us; locations `host` and 0-based GPU indices): each GPU's
        host link takes the measured host<->GPU bandwidth each way; GPU pairs all within 15% of
        each other (NVSwitch, NV18 all-to-all) become one switch with a link per GPU at the
        median pair bandwidth, else one link per pair at its own. Latencies: the measured one
        (a copy of 8 bytes issued and waited for) less the host's copy call (`copy_us`, 2.5 us),
        split over the route's links, at least 0.1 us each. The `host` line (launch and graph
        costs, DMA limit) and the `gpu_type` come from --like (a preset of the same GPUs), with
        the given fields replaced: the GPU name must be the one the profile was recorded with
        (`pg_device_info`'s name), or the profile's models will not apply.

Plain Python, no dependency: runs on a GPU machine with nothing installed."""
import argparse
import csv
import os
import re
import shlex
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PRESETS = os.path.join(os.path.dirname(HERE), "devices", "sim", "presets")


def preset_path(name):
    if "/" in name or name.endswith(".topo"):
        return name
    return os.path.join(PRESETS, name + ".topo")


def read_lines(name):
    with open(preset_path(name), encoding="utf-8") as f:
        return f.read().splitlines()


def words(line):
    body = line.split("#", 1)[0] if '"' not in line else line  # quoted names hold no '#'
    return shlex.split(body, comments=True)


def gpu_index(node):
    m = re.fullmatch(r"gpu(\d+)", node)
    return int(m.group(1)) if m else None


def subset(name, n, out):
    lines = read_lines(name)
    res, seen = [], 0
    for line in lines:
        w = words(line)
        if not w:
            res.append(line)
            continue
        if w[0] == "name":
            res.append("name %s-first-%d" % (w[1], n))
        elif w[0] == "gpus":
            count = int(w[1])
            keep = max(0, min(count, n - seen))
            seen += count
            if keep:
                res.append(" ".join(["gpus", str(keep)] + w[2:]))
        elif w[0] in ("link", "dlink"):
            ends = [gpu_index(x) for x in w[1:3]]
            if all(i is None or i < n for i in ends):
                res.append(line)
        else:
            res.append(line)
    if seen < n:
        sys.exit("sim_topo: %s has %d GPUs, not %d" % (name, seen, n))
    head = ("# The first %d GPUs of %s (benchmarks/sim_topo.py subset): its statements for those "
            "GPUs, unchanged.\n" % (n, os.path.basename(preset_path(name))))
    with open(out, "w", encoding="utf-8") as f:
        f.write(head + "\n".join(res) + "\n")


def read_bandwidth(path):
    links = {}
    with open(path, encoding="utf-8") as f:
        rows = [r for r in csv.reader(l for l in f if l.strip() and not l.startswith("#"))]
    if not rows or [c.strip() for c in rows[0]] != ["src", "dst", "bandwidth_gbps", "latency_us"]:
        sys.exit("sim_topo: %s is not an interconnect CSV (header src,dst,bandwidth_gbps,"
                 "latency_us)" % path)
    for r in rows[1:]:
        src, dst = r[0].strip(), r[1].strip()
        links[(src, dst)] = (float(r[2]), float(r[3]))
    gpus = sorted({int(x) for k in links for x in k if x != "host"})
    if not gpus or gpus != list(range(len(gpus))):
        sys.exit("sim_topo: %s names GPUs %s, not 0..N-1" % (path, gpus))
    return links, len(gpus)


def set_key(w, key, value):
    for i, x in enumerate(w):
        if x.startswith(key + "="):
            w[i] = "%s=%s" % (key, value)
            return
    w.append("%s=%s" % (key, value))


def quote(x):
    return '%s="%s"' % tuple(x.split("=", 1)) if " " in x and "=" in x else x


def from_bandwidth(a):
    links, n = read_bandwidth(a.csv)
    like = read_lines(a.like)
    host = gpu_type = None
    for line in like:
        w = words(line)
        if w and w[0] == "host":
            host = w
        elif w and w[0] == "gpu_type" and gpu_type is None:
            gpu_type = w
    if not gpu_type:
        sys.exit("sim_topo: %s has no gpu_type" % a.like)
    host = host or ["host"]
    for key in ("name", "memory", "sms", "cc", "memory_gbps"):
        v = getattr(a, "gpu_name" if key == "name" else key.replace("-", "_"))
        if v is not None:
            set_key(gpu_type, key, v)
    tname = gpu_type[1]

    def lat(us, hops):
        return max((us - a.copy_us) / hops, 0.1)

    out = ["# %s: built by benchmarks/sim_topo.py from-bandwidth from %s (polygpu-bandwidth's "
           "measured matrix)" % (a.name, os.path.basename(a.csv)),
           "# and %s (host costs, GPU type). Latencies: measured less copy_us %.1f us."
           % (os.path.basename(preset_path(a.like)), a.copy_us),
           "name " + a.name,
           " ".join(host),
           " ".join(quote(x) for x in gpu_type),
           "gpus %d %s" % (n, tname), ""]
    for g in range(n):
        h2d = links.get(("host", str(g)))
        d2h = links.get((str(g), "host"))
        if not h2d or not d2h:
            sys.exit("sim_topo: %s lacks host<->%d" % (a.csv, g))
        out.append("dlink host gpu%d %.1f %.2f" % (g, h2d[0], lat(h2d[1], 1)))
        out.append("dlink gpu%d host %.1f %.2f" % (g, d2h[0], lat(d2h[1], 1)))
    pairs = {(s, d): v for (s, d), v in links.items() if "host" not in (s, d)}
    if n > 1:
        bws = [v[0] for v in pairs.values()]
        med = statistics.median(bws)
        if len(pairs) == n * (n - 1) and all(abs(b - med) <= 0.15 * med for b in bws):
            latm = statistics.median(v[1] for v in pairs.values())
            out += ["", "# every pair within 15%% of %.0f GB/s: one switch" % med, "switch sw"]
            out += ["link gpu%d sw %.1f %.2f" % (g, med, lat(latm, 2)) for g in range(n)]
        else:
            out += ["", "# one link per measured pair"]
            for (s, d), (bw, us) in sorted(pairs.items()):
                out.append("dlink gpu%s gpu%s %.1f %.2f" % (s, d, bw, lat(us, 1)))
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("subset")
    s.add_argument("machine")
    s.add_argument("n", type=int)
    s.add_argument("--out", required=True)
    b = sub.add_parser("from-bandwidth")
    b.add_argument("csv")
    b.add_argument("--out", required=True)
    b.add_argument("--like", required=True, help="a preset or file of the same GPUs")
    b.add_argument("--name", default="measured")
    b.add_argument("--gpu-name")
    b.add_argument("--memory")
    b.add_argument("--sms")
    b.add_argument("--cc")
    b.add_argument("--memory-gbps")
    b.add_argument("--copy-us", type=float, default=2.5)
    a = ap.parse_args(argv)
    if a.cmd == "subset":
        if a.n < 1:
            ap.error("N must be at least 1")
        subset(a.machine, a.n, a.out)
    else:
        from_bandwidth(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
