#!/usr/bin/env python3
"""table.py NAME...: one Markdown row per run of run.sh, from its
conduit-bench report (NAME.txt), its workers' /healthz (NAME-healthz.txt)
and pg_stat_statements (NAME-pgss.txt): pass, req/s, p95/p99, errors,
CPU a request by group, PSS by group, cache hits, the feed's calls and
mean, statements over the whole run (ramp included), the notification
delay's p99 across the workers."""
import json
import re
import sys

print("| run | pass | req/s | p95 / p99 | errors | us a request: generator / conduitd / PostgreSQL "
      "| other CPU | PSS MB: conduitd / PostgreSQL | cache hits | feed calls, mean ms "
      "| statements (whole run) | notify p99 |")
print("| --- | --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | ---: | ---: |")
for name in sys.argv[1:]:
    txt = open(name + ".txt").read()
    get = lambda pat: re.search(pat, txt)
    ok = get(r"users \d+: (PASS|FAIL.*)").group(1)
    rps = get(r"req/s ([\d.]+);").group(1)
    lat = get(r"p95 (\S+)\s+p99 (\S+)")
    err = get(r"errors \d+ of (\d+) \(([\d.]+) %\)")
    cpu = get(r"generator (\d+) us, server (\d+) us.*?postgres (\d+) us")
    other = get(r"other [\d.]+ s \((\d+) %\)").group(1)
    pss = get(r"conduitd PSS ([\d.]+)/.*?postgres PSS ([\d.]+)/")
    hits = miss = 0
    p99 = []
    for line in open(name + "-healthz.txt"):
        if line.strip():
            c = json.loads(line).get("cache") or {}
            hits += c.get("hits", 0)
            miss += c.get("misses", 0)
            if "notify_delay_us" in c:
                p99.append(c["notify_delay_us"]["p99"] / 1000)
    calls = feed = None
    total = 0
    for line in open(name + "-pgss.txt"):
        cols = [x.strip() for x in line.split("|")]
        if len(cols) == 4 and cols[0].isdigit():
            total += int(cols[0])
            # The feed is the one statement whose viewer is $1 in the "me" CTE.
            if cols[3].startswith("WITH me AS MATERIALIZED ( SELECT $1::int8"):
                calls, feed = int(cols[0]), cols[2]
    hit = f"{100 * hits / (hits + miss):.1f} %" if hits + miss else ""
    print(f"| {name} | {ok.split(':')[0]} | {float(rps):,.0f} | {lat.group(1)} / {lat.group(2)} "
          f"| {err.group(2)} % | {cpu.group(1)} / {cpu.group(2)} / {cpu.group(3)} | {other} % "
          f"| {float(pss.group(1)):.0f} / {float(pss.group(2)):.0f} | {hit} "
          f"| {calls:,} at {feed} | {total:,} | "
          f"{' / '.join(f'{x:.1f}' for x in p99) + ' ms' if p99 else ''} |" if calls else
          f"| {name} | {ok} | {rps} | ... |")
