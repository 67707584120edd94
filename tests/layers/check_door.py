#!/usr/bin/env python3
"""check_door.py: the one door (docs/ARCHITECTURE.md, decision 8). Every public call enters a
runtime through core/handle.c (pg__enter*: resolve the handle, pin the runtime, take its lock)
and drops or retakes the lock only through it (pg__lock, pg__unlock, pg__cond_wait*), so the
lock discipline is read in one file, as Lua's lapi.c holds every entry behind lua_lock. This
fails on any other file of the library that locks, unlocks or waits on a runtime's mutex
directly (`rt->mu`, `x->rt->mu`). Creating and destroying the mutex is the runtime's own
(core/runtime.c). Usage: check_door.py SOURCE_DIR; exits 1 on any."""
import os
import re
import sys

DOOR = {"core/handle.c"}
CALL = re.compile(
    r"pthread_(mutex_lock|mutex_unlock|mutex_trylock|cond_wait|cond_timedwait)\s*\(([^;]*?)\)\s*[;=!<>]"
)
RUNTIME_MU = re.compile(r"(^|[^\w>])rt\s*->\s*mu\b|->\s*rt\s*->\s*mu\b|\(\s*rt\s*\)\s*->\s*mu\b")


def main(root):
    bad = []
    for folder in ("base", "nvrtc", "devices", "net", "dag", "policies", "core"):
        for d, _, names in os.walk(os.path.join(root, folder)):
            for n in sorted(names):
                if not n.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, n)
                rel = os.path.relpath(path, root)
                if rel in DOOR:
                    continue
                with open(path, encoding="utf-8") as f:
                    for no, line in enumerate(f, 1):
                        for m in CALL.finditer(line):
                            if RUNTIME_MU.search(m.group(2)):
                                bad.append(f"{rel}:{no}: {line.strip()}")
    for b in bad:
        print(f"{b}\n    a runtime's lock outside the door: use pg__lock/pg__unlock/pg__cond_wait "
              "(core/handle.h)")
    print(f"check_door: {len(bad)} direct use(s) of a runtime's lock outside core/handle.c")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
