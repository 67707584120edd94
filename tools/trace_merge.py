#!/usr/bin/env python3
"""trace_merge.py: the Chrome traces of a run on several ranks as one timeline.

    python3 tools/trace_merge.py OUT.json trace.rank0.json trace.rank1.json ...

With several ranks the trace option writes one file per rank (trace.json -> trace.rank1.json),
in which that rank's host and devices are processes of their own ("rank 1: device 0: ..."), so
merging is putting the events together. Each rank's times count from its runtime's creation,
which the ranks reach together (it is collective), so the ranks line up to within that skew.
"""
import json
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    events = []
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            events += json.load(f)["traceEvents"]
    with open(argv[1], "w", encoding="utf-8") as f:
        json.dump({"displayTimeUnit": "ms", "traceEvents": events}, f)
    print("%s: %d events from %d files" % (argv[1], len(events), len(argv) - 2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
