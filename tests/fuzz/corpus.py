#!/usr/bin/env python3
"""corpus.py: the fuzzers' seed inputs, taken from the tests: signatures from tests/c/*.c, and
for every kernel of tests/kernels/*.cu and of the C tests' infer_ok() sources one input "name
newline source". Usage: corpus.py SOURCE_DIR OUT_DIR (writes OUT_DIR/<harness>/*)."""
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
    for harness, items in (("signature_parse", [s.encode() for s in sorted(sigs)]),
                           ("signature_infer", [(n + "\n" + s).encode() for n, s in kernels]),
                           ("cpu_scan", [(n + "\n" + s).encode() for n, s in kernels])):
        d = os.path.join(out, harness)
        os.makedirs(d, exist_ok=True)
        for data in items:
            with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as fh:
                fh.write(data)
        print(f"{harness}: {len(items)} seeds in {d}")


main()
