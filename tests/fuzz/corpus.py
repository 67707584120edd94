#!/usr/bin/env python3
"""corpus.py: the fuzzers' seed inputs, taken from the tests: signatures from tests/c/*.c, and
for every kernel of tests/kernels/*.cu and of the C tests' infer_ok() sources one input "name
newline source"; the preset topologies and the C tests' topology texts; the options the C and
Python tests set, as "name=value" lines; the C tests' timing profiles. Usage: corpus.py SOURCE_DIR OUT_DIR (writes
OUT_DIR/<harness>/*)."""
import ast
import hashlib
import os
import re
import sys

STR = r'"(?:[^"\\\n]|\\.)*"'


def c_string(pieces):
    """The value of adjacent C string literals (ASCII escapes as Python reads them)."""
    return "".join(ast.literal_eval(p) for p in re.findall(STR, pieces))


def kernel_names(src):
    """Name expressions of the __global__ functions of a source (templates get <float>)."""
    names = []
    for m in re.finditer(r"__global__[^;{(]*?(\w+)\s*\(", src):
        name = m.group(1)
        head = src[max(0, m.start() - 200):m.start()]
        last = max(head.rfind(";"), head.rfind("}"))
        if "template" in head[last + 1:]:
            name += "<float>"
        if name not in names:
            names.append(name)
    return names


def topology_seeds(root):
    """The preset machines, and the topology texts of the C tests (adjacent string literals
    with a gpu_type or link statement; #define'd pieces expanded)."""
    seeds = []
    presets = os.path.join(root, "devices/sim/presets")
    for f in sorted(os.listdir(presets)):
        if f.endswith(".topo"):
            seeds.append(open(os.path.join(presets, f), encoding="utf-8").read())
    for f in sorted(os.listdir(os.path.join(root, "tests/c"))):
        if not f.endswith(".c"):
            continue
        text = open(os.path.join(root, "tests/c", f), encoding="utf-8").read()
        for m in re.finditer(r"#define (\w+) ((?:\s*" + STR + r")+)", text):
            text = re.sub(r"\b" + m.group(1) + r"\b(?=\s*\")", m.group(2).replace("\\", "\\\\"),
                          text[:m.start()] + text[m.end():])
        for m in re.finditer(r"(?:\s*" + STR + r")+", text):
            try:
                value = c_string(m.group(0))
            except (ValueError, SyntaxError):
                continue
            if "\n" in value and ("gpu_type" in value or "link " in value):
                seeds.append(value)
    return sorted(set(seeds))


def profile_seeds(root):
    """The timing profiles the C tests write (string literals with model or sample lines), and
    one of each kind of line with every x."""
    seeds = {"model,k,*,bytes,100000,0.5\nmodel,k,NVIDIA H200,threads,7,1\n",
             "# a profile\nsample,k,NVIDIA H200,4096x1x1,256x1x1,1048576,30000\n"
             "sample,k,NVIDIA H200,8192x1x1,256x1x1,2097152,52000\n"
             "sample,\"a,b\",*,1x1x1,1x1x1,0,1200\n"}
    for f in sorted(os.listdir(os.path.join(root, "tests/c"))):
        if not f.endswith(".c"):
            continue
        text = open(os.path.join(root, "tests/c", f), encoding="utf-8").read()
        for m in re.finditer(r"(?:\s*" + STR + r")+", text):
            try:
                value = c_string(m.group(0))
            except (ValueError, SyntaxError):
                continue
            if re.search(r"^(model|sample),", value, re.M):
                seeds.add(value)
    return sorted(seeds)


OPTION_NAMES = ("devices|policy|stream_policy|parent_stream_policy|execution|prefetch|"
                "interconnect|exploration_threshold|log|cache_dir|check|device_memory_limit|"
                "elide_copies|chunk_bytes|models|power_limit|power_watts|ranks")


def option_seeds(root):
    """One "name=value" line per option value the tests set, one input per test file with all
    of its lines, and each preset as devices=sim:NAME (with the sim options)."""
    seeds, lines = set(), set()
    files = [os.path.join(root, "tests/c", f) for f in sorted(os.listdir(os.path.join(root, "tests/c")))
             if f.endswith(".c")]
    py = os.path.join(root, "bindings/python/tests")
    if os.path.isdir(py):
        files += [os.path.join(py, f) for f in sorted(os.listdir(py)) if f.endswith(".py")]
    for path in files:
        text = open(path, encoding="utf-8").read()
        found = []
        for m in re.finditer(r'pg_options_set\(\s*[^,]+,\s*"(\w+)",\s*(' + STR + r')', text):
            found.append(m.group(1) + "=" + c_string(m.group(2)))
        for m in re.finditer(r'\b(' + OPTION_NAMES + r')=(["\'])([^"\'\\\n]*)\2', text):
            found.append(m.group(1) + "=" + m.group(3))
        lines.update(found)
        if found:
            seeds.add("\n".join(sorted(set(found))))
    for f in sorted(os.listdir(os.path.join(root, "devices/sim/presets"))):
        if f.endswith(".topo"):
            lines.add("devices=sim:" + f[:-5])
            lines.add("devices=sim:" + f[:-5] + ",compute=cpu,host_time=0")
    seeds.update(lines)
    return sorted(seeds)


def main():
    root, out = sys.argv[1], sys.argv[2]
    sigs, kernels = set(), []
    for f in sorted(os.listdir(os.path.join(root, "tests/c"))):
        if not f.endswith(".c"):
            continue
        text = open(os.path.join(root, "tests/c", f), encoding="utf-8").read()
        for m in re.finditer(r"(?:check_scalar|check_parse_error|parse_ok|pg__signature_parse)"
                             r"\(\s*(" + STR + r")", text):
            sigs.add(c_string(m.group(1)))
        for m in re.finditer(r"\{\s*" + STR + r"\s*,\s*(" + STR + r")\s*,\s*\d", text):
            sigs.add(c_string(m.group(1)))  # the differential test's kernel table
        for m in re.finditer(r"static const char \*(\w+)\s*=\s*((?:\s*" + STR + r")+)\s*;", text):
            src = c_string(m.group(2))
            if "__global__" in src:
                kernels += [(n, src) for n in kernel_names(src)]
    for f in sorted(os.listdir(os.path.join(root, "tests/kernels"))):
        src = open(os.path.join(root, "tests/kernels", f), encoding="utf-8").read()
        kernels += [(n, src) for n in kernel_names(src)]
    sigs.discard("")
    topologies, options = topology_seeds(root), option_seeds(root)
    profiles = profile_seeds(root)
    for harness, items in (("signature_parse", [s.encode() for s in sorted(sigs)]),
                           ("signature_infer", [(n + "\n" + s).encode() for n, s in kernels]),
                           ("cpu_scan", [(n + "\n" + s).encode() for n, s in kernels]),
                           ("topology", [t.encode() for t in topologies]),
                           ("options", [o.encode() for o in options]),
                           ("profile", [p.encode() for p in profiles])):
        d = os.path.join(out, harness)
        os.makedirs(d, exist_ok=True)
        for data in items:
            with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as fh:
                fh.write(data)
        print(f"{harness}: {len(items)} seeds in {d}")


main()
