#!/usr/bin/env python3
"""check_calls.py: every call of the library goes down the layer order, read from the built
objects rather than the sources (check_layers.py reads includes, which miss a call made through
a declaration in a lower header but defined higher up, as dag/export.c once called
pg_access_name in core/observe.c).

    base -> nvrtc -> devices, net -> dag, node, policies -> core -> linalg

For each object file of the library (CMake's `polygpu.dir`), `nm` gives the symbols it defines
and the ones it uses; a symbol used by a file of one layer and defined by a file of a higher
layer, or of another layer of the same rank, is a call against the order. Calls upward through
function pointers core hands down (a history's drop, a policy's view) are not symbols and are
allowed, as ARCHITECTURE.md says. linalg/ (the features on the runtime: the tiled GEMM, the
BLAS tasks) is a user of the public API: below itself it may call only base/ and the functions
core/polygpu.h declares, never a private pg__ function of the engine.

Within a layer calls may go both ways, but not round in large circles: the file-level call
graph's strongly connected components (files that all reach each other through calls) must have
at most MAX_LOOP files, so that a module can be read from the modules below it (issue 37: core
had one loop of 21 files). Usage: check_calls.py OBJECT_DIR [NM]; exits 1 on any."""
import os
import re
import subprocess
import sys

MAX_LOOP = 6  # files in the largest call loop allowed

RANK = {"base": 0, "nvrtc": 1, "devices": 2, "net": 2, "dag": 3, "node": 3, "policies": 3, "core": 4,
        "linalg": 5}
# Layers that may call only some of the layers below them, and the public functions.
ONLY = {"linalg": {"base"}}
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PUBLIC_HEADER = os.path.join(ROOT, "core", "polygpu.h")


def public_functions():
    """The names core/polygpu.h declares as functions."""
    src = open(PUBLIC_HEADER, encoding="utf-8").read()
    return set(re.findall(r"\b(pg_[a-z0-9_]+)\s*\(", src))


def symbols(nm, path):
    out = subprocess.run([nm, "-P", path], capture_output=True, text=True, check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.add(name)
        elif kind in "TDBRCVWGS":  # global definitions (lower case ones are file-local)
            defined.add(name)
    return defined, used


def main(objdir, nm="nm"):
    owner, uses = {}, {}
    for d, _, names in os.walk(objdir):
        for n in names:
            if not n.endswith(".o"):
                continue
            path = os.path.join(d, n)
            src = os.path.relpath(path, objdir)[: -len(".o")]  # e.g. dag/export.c
            if src.split("/", 1)[0] not in RANK:
                continue
            if not os.path.isfile(os.path.join(ROOT, src)):
                continue  # left in the build tree by a file since moved or deleted
            defined, used = symbols(nm, path)
            for s in defined:
                owner[s] = src
            uses[src] = used
    if not uses:
        print(f"check_calls: no library objects under {objdir}")
        return 1
    bad = []
    public = public_functions()
    for src, used in sorted(uses.items()):
        a = src.split("/", 1)[0]
        for s in sorted(used):
            target = owner.get(s)
            if target is None:
                continue  # the C library, MPI, ...
            b = target.split("/", 1)[0]
            if a == b:
                continue
            if a in ONLY and b not in ONLY[a] and s not in public:
                bad.append(f"{src}: calls {s} in {target}: not in core/polygpu.h ({a} may call "
                           f"only the public functions and {', '.join(sorted(ONLY[a]))})")
                continue
            if RANK[b] > RANK[a] or RANK[b] == RANK[a]:
                how = "sideways" if RANK[b] == RANK[a] else "up"
                bad.append(f"{src}: calls {s} in {target}: goes {how} ({a} -> {b})")
    for line in bad:
        print(line)
    print(f"check_calls: {len(uses)} objects, {len(bad)} call(s) against the layer order")
    loops = call_loops(owner, uses)
    big = [c for c in loops if len(c) > MAX_LOOP]
    largest = max((len(c) for c in loops), default=1)
    for c in big:
        print(f"call loop of {len(c)} files (more than {MAX_LOOP}): {' '.join(sorted(c))}")
        for a in sorted(c):
            for b in sorted(c):
                names = sorted(s for s in uses[a] if owner.get(s) == b)
                if names and a != b:
                    print(f"  {a} -> {b}: {', '.join(names)}")
    print(f"check_calls: largest call loop {largest} file(s), {len(big)} loop(s) over {MAX_LOOP}")
    return 1 if bad or big else 0


def call_loops(owner, uses):
    """The strongly connected components of the file-level call graph with more than one file
    (Tarjan's algorithm, iterative)."""
    edges = {a: sorted({owner[s] for s in used if s in owner and owner[s] != a})
             for a, used in uses.items()}
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on.add(v)
            nxt = edges.get(v, [])
            if i < len(nxt):
                work.append((v, i + 1))
                w = nxt[i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
    return out


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:3]))
