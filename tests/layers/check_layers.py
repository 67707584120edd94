#!/usr/bin/env python3
"""check_layers.py: every #include of the library goes down the documented layer order
(docs/ARCHITECTURE.md, "Layers"), never up and never sideways between layers of one rank.

    base -> nvrtc -> devices, net -> dag, node, policies -> core -> linalg -> bindings

The public header core/polygpu.h is the vocabulary every layer shares (its types and status
codes), so any file may include it; bindings include nothing else of the library. linalg/ (the
features built on the runtime: the tiled GEMM, the BLAS tasks) is a user of the public API, as
cuBLASXt is of cuBLAS: below itself it may include only base/ (the error message, the
allocation door) and core/polygpu.h. Also: no file of core/ or linalg/ names a device kind
(PG_DEVICE_CPU/CUDA): they ask a device's capabilities (device_class, the backend registry). Prints
each include against the order (and each kind branch) and exits 1 if there is one."""
import os
import re
import sys

RANK = {"base": 0, "nvrtc": 1, "devices": 2, "net": 2, "dag": 3, "node": 3, "policies": 3, "core": 4,
        "linalg": 5, "bindings": 6}
# Layers that may reach only some of the layers below them (and the public header).
ONLY = {"linalg": {"base"}}
PUBLIC = "core/polygpu.h"
KIND_BRANCH = re.compile(r"\bPG_DEVICE_(?:CPU|CUDA)\b")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer(path):
    top = path.split("/", 1)[0]
    return top if top in RANK else None


def resolve(root, including, name):
    """The repository path an #include "name" in file `including` refers to, or None."""
    for base in (os.path.dirname(including), "", "core"):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def main(root):
    bad = []
    files = 0
    for top in RANK:
        for d, _, names in os.walk(os.path.join(root, top)):
            if "/tests" in d.replace(root, "") or "/build" in d:
                continue
            for n in names:
                if not n.endswith((".c", ".h")):
                    continue
                path = os.path.relpath(os.path.join(d, n), root)
                files += 1
                src = open(os.path.join(root, path), encoding="utf-8", errors="replace").read()
                # Core asks the registry and the devices' capabilities (device_class,
                # backend): a branch on a device kind there is a backend named in the engine.
                if layer(path) in ("core", "linalg") and path != PUBLIC and KIND_BRANCH.search(src):
                    bad.append(f"{path}: branches on a device kind "
                               f"({KIND_BRANCH.search(src).group(0)}): ask device_class or the "
                               f"backend registry (devices/registry.h)")
                for name in INCLUDE.findall(src):
                    target = resolve(root, path, name)
                    if target is None or target == PUBLIC:
                        continue  # a system or generated header, or the public one
                    a, b = layer(path), layer(target)
                    if b is None or a == b:
                        continue
                    if a == "bindings" or RANK[b] > RANK[a] or (RANK[b] == RANK[a] and a != b):
                        how = "sideways" if RANK[b] == RANK[a] else "up"
                        bad.append(f"{path}: #include \"{name}\" goes {how} ({a} -> {b})")
                    elif a in ONLY and b not in ONLY[a]:
                        bad.append(f"{path}: #include \"{name}\" goes past the public header "
                                   f"({a} -> {b}: {a} may include only core/polygpu.h and "
                                   f"{', '.join(sorted(ONLY[a]))})")
    for line in bad:
        print(line)
    print(f"check_layers: {files} files, {len(bad)} include(s) against the layer order or kind branches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.getcwd()))
