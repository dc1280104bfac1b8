#!/usr/bin/env python3
"""kinds.py NAME-healthz.txt...: the cache lookups of every worker in each
file summed by kind, as a Markdown table: hit, stale, absent and the
share of each, then entries, bytes, evictions and unadmitted values."""
import json
import sys

for path in sys.argv[1:]:
    kinds, totals = {}, {"entries": 0, "bytes": 0, "evictions": 0, "unadmitted": 0}
    workers = 0
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        cache = json.loads(line)["cache"]
        workers += 1
        for k in totals:
            totals[k] += cache.get(k, 0)
        for kind, counts in cache["lookups"].items():
            acc = kinds.setdefault(kind, [0, 0, 0])
            for i in range(3):
                acc[i] += counts[i]
    print(f"\n{path}: {workers} workers, " +
          ", ".join(f"{k} {v:,}" for k, v in totals.items()) + "\n")
    print("| kind | hit | stale | absent | hit % | stale % | absent % |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind, (h, s, a) in sorted(kinds.items(), key=lambda kv: -sum(kv[1])):
        n = h + s + a
        print(f"| {kind} | {h:,} | {s:,} | {a:,} | {100 * h / n:.1f} | {100 * s / n:.1f} | "
              f"{100 * a / n:.1f} |")
