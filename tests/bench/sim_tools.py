#!/usr/bin/env python3
"""tests/bench/sim_tools.py: the simulator's study tools (the ctest bench_sim_tools), on this
machine without a GPU:

- benchmarks/derive_profile.py classifies synthetic kernels (launch-, memory-, latency-,
  compute-bound; FP64 from the source) and scales each sample by the datasheet ratio, the first
  microsecond and the launch overhead kept, deterministically, labelled SIMULATED;
- benchmarks/sim_topo.py: a machine's first N GPUs open as N simulated GPUs with the machine's
  links; a measured matrix whose GPU pairs agree becomes a switch, one that does not, pair links;
- benchmarks/sim_scaling.py refuses a profile without the machine's GPU name;
- benchmarks/sim_compare.py matches rows and counts those within the tolerance;
- benchmarks/sim_validate.sh runs end to end on two CPU devices (the GPU command's steps other
  than the GPUs: matrix, profile, measured runs, topology, predictions, table).

    python3 tests/bench/sim_tools.py BUILD_DIR"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import derive_profile  # noqa: E402
import sim_compare  # noqa: E402
import sim_topo  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED: " + what)


def near(a, b, rel=1e-6):
    return abs(a - b) <= rel * abs(b) + 1


def test_derive(tmp):
    kdir = os.path.join(tmp, "kernels")
    os.makedirs(kdir)
    with open(os.path.join(kdir, "k.cu"), "w") as f:
        f.write('extern "C" __global__ void dbl(double *y, const double *x, int n) {}\n'
                'extern "C" __global__ void flt(float *y, int n) {}\n')
    H = "NVIDIA H200"
    # kernel time = ns - 5.5 us: mem 100 us for 400 MB (4 TB/s: memory-bound), small 1 us
    # (launch), few 10 us with 4 blocks (latency), flt 100 us for 1 MB on a full grid (compute),
    # dbl the same in double (compute, FP64).
    rows = [["sample", "mem", H, "65536x1x1", "256x1x1", "400000000", "105500"],
            ["sample", "mem", H, "65536x1x1", "256x1x1", "1000", "6000"],
            ["sample", "small", H, "1x1x1", "32x1x1", "16", "6500"],
            ["sample", "few", H, "4x1x1", "256x1x1", "4096", "15500"],
            ["sample", "flt", H, "65536x1x1", "256x1x1", "1000000", "105500"],
            ["sample", "dbl", H, "65536x1x1", "256x1x1", "1000000", "105500"]]
    prof = os.path.join(tmp, "h200.csv")
    with open(prof, "w") as f:
        f.write("# a profile\n" + "\n".join(",".join(r) for r in rows) + "\n")
    out = os.path.join(tmp, "v100.prof")
    args = ["--target", "v100", "--in", prof, "--out", out, "--kernels", kdir]
    check(derive_profile.main(args) == 0, "derive_profile runs")
    text = open(out).read()
    check("SIMULATED, derived V100 profile" in text, "the derived profile is labelled SIMULATED")
    got = {}
    for line in text.splitlines():
        if line.startswith("sample,"):
            f = line.split(",")
            got.setdefault(f[1], []).append((f[2], int(f[6])))
    check(all(d == "Tesla V100-SXM2-32GB" for v in got.values() for d, _ in v),
          "samples name the V100 of the dgx1-v100 preset")
    # mem: 5.5 + 1 + 99 x 4800/900; its small sample (0.5 us) stays 0.5 + 5.5
    check(near(got["mem"][0][1], (5.5 + 1 + 99 * 4800 / 900) * 1e3), "memory-bound scaled")
    check(near(got["mem"][1][1], 6000), "a sample under 1 us is kept")
    check(near(got["small"][0][1], 6500), "launch-bound kept as measured")
    check(near(got["few"][0][1], (5.5 + 1 + 9 * 1980 / 1530) * 1e3), "latency-bound: clocks")
    check(near(got["flt"][0][1], (5.5 + 1 + 99 * 67 / 15.7) * 1e3), "compute-bound FP32")
    check(near(got["dbl"][0][1], (5.5 + 1 + 99 * 34 / 7.8) * 1e3), "compute-bound FP64")
    out2 = os.path.join(tmp, "v100b.prof")
    derive_profile.main(["--target", "v100", "--in", prof, "--out", out2, "--kernels", kdir])
    check(open(out2).read() == text, "the derivation is deterministic")
    try:
        derive_profile.main(["--target", "v100", "--in", prof, "--out", out2,
                             "--source-device", "NVIDIA B200"])
        check(False, "a profile without the source device's samples is refused")
    except SystemExit as e:
        check("no samples of device 'NVIDIA B200'" in str(e), "the refusal names the device")


def test_topologies(tmp):
    import polygpu as pg
    sub = os.path.join(tmp, "dgx1-4.topo")
    sim_topo.subset("dgx1-v100", 4, sub)
    with pg.Runtime(devices="sim:" + sub + ",host_time=0") as rt:
        check(len(rt.devices) == 4, "the first 4 GPUs of a DGX-1 are 4 simulated GPUs")
    text = open(sub).read()
    check("link gpu0 gpu3 48" in text and "gpu4" not in text.split("name", 1)[1],
          "the subset keeps the quad's NVLinks and drops the other GPUs")
    csv_ok = os.path.join(tmp, "bw-switch.csv")
    with open(csv_ok, "w") as f:
        f.write("# polygpu interconnect\nsrc,dst,bandwidth_gbps,latency_us\n")
        for g in range(3):
            f.write("host,%d,55,6.1\n%d,host,55,7.6\n" % (g, g))
            for h in range(3):
                if h != g:
                    f.write("%d,%d,%d,7.4\n" % (g, h, 390 + g + h))
    topo = os.path.join(tmp, "m.topo")
    sim_topo.main(["from-bandwidth", csv_ok, "--out", topo, "--like", "h200x4-nv18",
                   "--gpu-name", "NVIDIA H100 80GB HBM3", "--memory", "80000000000"])
    text = open(topo).read()
    check("switch sw" in text and "link gpu2 sw 392.0 2.45" in text,
          "agreeing pairs become one switch at the median, latency split over two links")
    check('name="NVIDIA H100 80GB HBM3"' in text and "dlink host gpu1 55.0 3.60" in text,
          "GPU name and host links from the matrix")
    with pg.Runtime(devices="sim:" + topo + ",host_time=0") as rt:
        check(len(rt.devices) == 3 and rt.devices[0]["name"] == "NVIDIA H100 80GB HBM3",
              "the measured topology opens with the GPUs' name")
    uneven = os.path.join(tmp, "bw-pairs.csv")
    with open(uneven, "w") as f:
        f.write("src,dst,bandwidth_gbps,latency_us\nhost,0,12,5\n0,host,12,5\nhost,1,12,5\n"
                "1,host,12,5\n0,1,48,4\n1,0,24,4\n")
    sim_topo.main(["from-bandwidth", uneven, "--out", topo, "--like", "dgx1-v100"])
    text = open(topo).read()
    check("dlink gpu0 gpu1 48.0" in text and "dlink gpu1 gpu0 24.0" in text,
          "pairs that differ get their own links")


def test_scaling_refuses(tmp):
    prof = os.path.join(tmp, "other.csv")
    with open(prof, "w") as f:
        f.write("sample,k,Tesla V100-SXM2-32GB,1x1x1,1x1x1,8,9000\n")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "sim_scaling.py"),
                        "--machine", "dgx2-v100", "--profile", prof, "--gpus", "1",
                        "--out-dir", os.path.join(tmp, "scaling"), "--name", "x"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "Tesla V100-SXM3-32GB" in r.stderr,
          "sim_scaling.py refuses a profile that lacks the machine's GPU name")


def test_compare(tmp):
    def res(path, rows):
        with open(path, "w") as f:
            json.dump({"results": [{"bench": b, "size": "tiny", "version": "polygpu",
                                    "policy": p, "gpus": g, "median_s": t}
                                   for b, p, g, t in rows]}, f)
    m, p = os.path.join(tmp, "m.json"), os.path.join(tmp, "p.json")
    res(m, [("vec", "round-robin", 2, 1.0), ("cg", "round-robin", 2, 2.0),
            ("mul", "round-robin", 2, 1.0)])
    res(p, [("vec", "round-robin", 2, 1.05), ("cg", "round-robin", 2, 2.5)])
    text, ok, n = sim_compare.table(sim_compare.load([m]), sim_compare.load([p]), [], 0.1, False)
    check((ok, n) == (1, 2), "one of two matched rows within 10%")
    check("1.25 ✗" in text and "Measured without a prediction: mul" in text,
          "misses marked, unmatched rows named")


def test_validate_script(build, tmp):
    out = os.path.join(tmp, "validate")
    env = dict(os.environ, OUT=out)
    r = subprocess.run(["bash", os.path.join(ROOT, "benchmarks", "sim_validate.sh"), "--gpus", "2",
                        "--devices", "host:2", "--sizes", "tiny", "--bench", "vec,cg",
                        "--build-dir", build, "--runs", "1", "--warmup", "1"],
                       env=env, capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, "sim_validate.sh on host:2 exits 0:\n" + r.stdout[-2000:] +
          r.stderr[-2000:])
    table = open(os.path.join(out, "table.md")).read() if os.path.exists(
        os.path.join(out, "table.md")) else ""
    # vec and cg at 1 GPU (one policy) and at 2 (seven, earliest-finish included): 16 rows,
    # each measured and predicted
    check("of 16 configurations" in table, "the table has every configuration:\n" + table[-800:])
    for f in ("bandwidth.csv", "device.json", "profile-sync.csv", "topo/measured-2.topo"):
        check(os.path.exists(os.path.join(out, f)), "sim_validate.sh wrote " + f)


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    with tempfile.TemporaryDirectory(prefix="pg-sim-tools-") as tmp:
        test_derive(tmp)
        test_topologies(tmp)
        test_scaling_refuses(tmp)
        test_compare(tmp)
        test_validate_script(build, tmp)
    print("%d failure(s)" % len(failures) if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
