#!/usr/bin/env python3
"""SIMULATED scaling of the suite on one machine: its first 1, 2, 4, ... GPUs.

    python3 benchmarks/sim_scaling.py --machine dgx1-v100 --profile v100.prof --gpus 1,2,4,8 \\
        --bench vec,bs,ml,cg,mul --sizes paper-min --policies all --out-dir DIR --name NAME \\
        [--warmup 1] [--runs 2] [--host-time 1] [--build-dir build]

For each count N below the machine's size, `benchmarks/sim_topo.py subset` writes the machine's
first N GPUs as a topology file (DIR/topo/MACHINE-first-N.topo); then benchmarks/run.py runs
the suite on `sim:FILE,profile=P` with N GPUs (the machine itself for its full size), every run
merged into DIR/NAME.json (run.py merges into an existing results file). At one GPU the device
policy has no choice: run.py runs minmax-transfer-time there. Times are the simulator's virtual
clock: predictions, not measurements."""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sim_topo  # noqa: E402  (beside this file)


def machine_gpus(machine):
    n = 0
    for line in sim_topo.read_lines(machine):
        w = sim_topo.words(line)
        if w and w[0] == "gpus":
            n += int(w[1])
    return n


def gpu_names(machine):
    out = set()
    for line in sim_topo.read_lines(machine):
        w = sim_topo.words(line)
        if w and w[0] == "gpu_type":
            out |= {x.split("=", 1)[1] for x in w[2:] if x.startswith("name=")}
    return out


def profile_devices(path):
    """The device column of a profile's model and sample lines."""
    import csv
    import gzip
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return {r[2] for r in csv.reader(l for l in f if not l.startswith("#"))
                if len(r) > 2 and r[0] in ("model", "sample")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--machine", required=True, help="a preset name or topology file")
    ap.add_argument("--profile", required=True)
    ap.add_argument("--gpus", default="1,2,4,8")
    ap.add_argument("--bench", default="vec,bs,ml,cg,mul")
    ap.add_argument("--sizes", default="medium")
    ap.add_argument("--policies", default="all")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--host-time", default="1")
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--build-dir", default=os.path.join(os.path.dirname(HERE), "build"))
    a = ap.parse_args(argv)
    total = machine_gpus(a.machine)
    counts = [int(x) for x in a.gpus.split(",")]
    if any(c < 1 or c > total for c in counts):
        ap.error("--gpus %s: %s has %d GPUs" % (a.gpus, a.machine, total))
    # A profile names devices; a GPU whose name it lacks gets the default model, silently.
    names, devs = gpu_names(a.machine), profile_devices(a.profile)
    if "*" not in devs and not names & devs:
        ap.error("the profile %s has samples for %s, the machine's GPUs are %s: derive it for "
                 "them (benchmarks/derive_profile.py --device-name)" %
                 (a.profile, sorted(devs), sorted(names)))
    os.makedirs(os.path.join(a.out_dir, "topo"), exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(a.build_dir, "bindings", "python") + (
        ":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    status = 0
    for n in counts:
        if n == total:
            machine = a.machine
        else:
            base = os.path.basename(sim_topo.preset_path(a.machine))[:-len(".topo")]
            machine = os.path.join(os.path.abspath(a.out_dir), "topo",
                                   "%s-first-%d.topo" % (base, n))
            sim_topo.subset(a.machine, n, machine)
        spec = "sim:%s,profile=%s,host_time=%s" % (machine, os.path.abspath(a.profile),
                                                    a.host_time)
        if len(spec) > 127:  # the devices option's limit: the profile goes by the environment
            spec = "sim:%s,host_time=%s" % (machine, a.host_time)
            env["PG_SIM_PROFILE"] = os.path.abspath(a.profile)
        cmd = [sys.executable, os.path.join(HERE, "run.py"), "--devices", spec, "--gpus", str(n),
               "--bench", a.bench, "--sizes", a.sizes, "--versions", "polygpu",
               "--policies", a.policies if n > 1 else "minmax-transfer-time",
               "--mul-sweep", "none", "--warmup", str(a.warmup), "--runs", str(a.runs),
               "--no-plots", "--build", "never", "--build-dir", a.build_dir,
               "--out-dir", a.out_dir, "--name", a.name]
        print("sim_scaling: %d GPUs: %s" % (n, " ".join(cmd)), flush=True)
        status |= subprocess.call(cmd, env=env)
    return status


if __name__ == "__main__":
    sys.exit(main())
