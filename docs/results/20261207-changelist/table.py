#!/usr/bin/env python3
"""table.py NAME...: one Markdown row per run of ab.sh: pass, req/s, p95,
CPU a request by group, "other", and one worker's syscalls a response
(each count over 10 s of the hold divided by its writev count, one a
response)."""
import re
import sys

CALLS = ["epoll_ctl", "epoll_wait", "recvfrom", "readv", "ioctl", "sendto"]
print("| run | pass | req/s | p95 | us a request: generator / conduitd / PostgreSQL | other | "
      + " | ".join(CALLS) + " |")
print("| --- | --- | ---: | ---: | --- | ---: | " + " | ".join("---:" for _ in CALLS) + " |")
for name in sys.argv[1:]:
    txt = open(name + ".txt").read()
    ok = re.search(r"users \d+: (PASS|FAIL)", txt).group(1)
    rps = float(re.search(r"req/s ([\d.]+);", txt).group(1))
    p95 = re.search(r"latency p50 \S+\s+p95 (\S+)", txt).group(1)
    cpu = re.search(r"generator (\d+) us, server (\d+) us.*?postgres (\d+) us", txt)
    other = re.search(r"other [\d.]+ s \((\d+) %\)", txt).group(1)
    counts = {}
    for line in open(name + "-syscalls.txt"):
        m = re.match(r"\s*([\d,]+)\s+syscalls:sys_enter_(\w+)", line)
        if m:
            counts[m.group(2)] = int(m.group(1).replace(",", ""))
    per = [f"{counts[c] / counts['writev']:.2f}" for c in CALLS]
    print(f"| {name} | {ok} | {rps:,.0f} | {p95} | {cpu.group(1)} / {cpu.group(2)} / "
          f"{cpu.group(3)} | {other} % | " + " | ".join(per) + " |")
