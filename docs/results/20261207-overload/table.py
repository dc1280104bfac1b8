#!/usr/bin/env python3
"""table.py: the tables of this folder's README from what run.sh wrote.

  table.py search NAME...  every level of each capacity search
  table.py runs NAME...    one row a run: users, verdict, req/s, 2xx a
                           second, p95/p99, errors, CPU a request by
                           group, PSS, sheds by reason (from /metrics)
  table.py seconds NAME    the hold second by second: median and worst
                           per-second p95, first and last minute
  table.py stall NAME      p95 before a stall and how long after it ended
                           the per-second p95 stayed above twice that
                           (median of five seconds)

The per-second figures are conduit-bench's progress lines (NAME.txt):
one p95 for each second's responses, the hold's only."""
import json
import re
import statistics
import sys

LINE = re.compile(r"^\[\s*(\d+)s\] (\w+)\s+users\s+(\d+).*?req/s\s+(\d+)\s+p95\s+([\d.]+)(us|ms|s)\s+p99\s+([\d.]+)(us|ms|s)\s+errors (\d+)")
UNIT = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def seconds(name):
    """[(t, phase, users, rps, p95_ms, errors)] of the progress lines."""
    out = []
    for line in open(name + ".txt"):
        m = LINE.match(line)
        if m:
            out.append((int(m[1]), m[2], int(m[3]), int(m[4]), float(m[5]) * UNIT[m[6]], int(m[9])))
    return out


def sheds(name):
    s = {}
    try:
        for line in open(name + "-metrics.txt"):
            m = re.match(r'conduitd_shed_total\{.*reason="([^"]+)".*\} (\d+)', line)
            if m:
                s[m[1]] = s.get(m[1], 0) + int(m[2])
    except FileNotFoundError:
        pass
    return ", ".join(f"{k} {v:,}" for k, v in sorted(s.items()) if v) or "none"


def stale(name):
    n = 0
    try:
        for line in open(name + "-metrics.txt"):
            if line.startswith("conduitd_cache_stale_answers_total"):
                n += int(line.split()[-1])
    except FileNotFoundError:
        pass
    return n


def runs(names):
    print("| run | users | verdict | req/s | 2xx a second | p95 / p99 | errors | us a request: generator / conduitd / PostgreSQL | other CPU | PSS MB: conduitd / PostgreSQL | shed by conduitd (whole run) | stale answers |")
    print("| --- | ---: | --- | ---: | ---: | --- | ---: | --- | ---: | --- | --- | ---: |")
    for name in names:
        lv = json.load(open(name + ".json"))["level"]
        a = lv["accounting"]
        ok = lv["rps"] * (1 - lv["error_pct"] / 100)
        other = 100 * a["cpu_s"]["other"] / a["machine_busy_s"] if a["machine_busy_s"] else 0
        print(f"| {name} | {lv['users']:,} | {'pass' if lv['pass'] else 'FAIL'} | {lv['rps']:,.0f} | {ok:,.0f} "
              f"| {lv['latency']['p95_ms']:.0f} / {lv['latency']['p99_ms']:.0f} ms | {lv['error_pct']:.2f} % "
              f"| {lv['generator_us_per_request']:.0f} / {lv['server_us_per_request']:.0f} / {lv['postgres_us_per_request']:.0f} "
              f"| {other:.0f} % | {a['pss_mean_mb']['conduitd']:.0f} / {a['pss_mean_mb']['postgres']:.0f} "
              f"| {sheds(name)} | {stale(name):,} |")


def search(names):
    for name in names:
        s = json.load(open(name + ".json"))["search"]
        print(f"{name}: {s['users_passed']:,} users pass, {s['users_failed']:,} fail; stopped: {s['stopped']}\n")
        print("| level | users | verdict | req/s | 2xx a second | p95 / p99 | errors | us a request: conduitd / PostgreSQL | why |")
        print("| ---: | ---: | --- | ---: | ---: | --- | ---: | --- | --- |")
        for i, lv in enumerate(s["levels"], 1):
            ok = lv["rps"] * (1 - lv["error_pct"] / 100)
            print(f"| {i} | {lv['users']:,} | {'pass' if lv['pass'] else 'FAIL'} | {lv['rps']:,.0f} | {ok:,.0f} "
                  f"| {lv['latency']['p95_ms']:.0f} / {lv['latency']['p99_ms']:.0f} ms | {lv['error_pct']:.2f} % "
                  f"| {lv['server_us_per_request']:.0f} / {lv['postgres_us_per_request']:.0f} | {lv['why']} |")
        print()


def hold(name):
    return [x for x in seconds(name) if x[1] == "hold" and x[3] > 0]


def per_second(name):
    h = hold(name)
    p = [x[4] for x in h]
    first, last = [x[4] for x in h[:60]], [x[4] for x in h[-60:]]
    over = sum(1 for x in p if x >= 500)
    print(f"{name}: {len(h)} seconds of hold; per-second p95 median {statistics.median(p):.1f} ms, "
          f"worst {max(p):.0f} ms; first minute median {statistics.median(first):.1f} ms, "
          f"last minute {statistics.median(last):.1f} ms; seconds at or over 500 ms: {over}")
    # the worst 10 s window, to find a jump at constant load
    w = max(range(max(1, len(p) - 9)), key=lambda i: statistics.median(p[i:i + 10]))
    print(f"  worst 10 s (median of its per-second p95): {statistics.median(p[w:w + 10]):.1f} ms from hold second {w + 1}")


def stall(name):
    note = open(name + "-stall.txt").read()
    t0 = int(re.search(r"\[\s*(\d+)s\]", note)[1])
    h = hold(name)
    before = [x[4] for x in h if t0 - 10 <= x[0] < t0]
    base = statistics.median(before)
    end = t0 + 2
    # Back: the first second after the stall within twice the level before,
    # and the median of it and the next four too (one second's p95 alone is
    # noisy: it reached 2x before the stall too).
    back = None
    after = [x for x in h if x[0] > end]
    for i in range(len(after) - 4):
        if after[i][4] <= 2 * base and statistics.median(y[4] for y in after[i:i + 5]) <= 2 * base:
            back = after[i][0]
            break
    worst = max(x[4] for x in h if t0 <= x[0] <= end + 10)
    errs = sum(x[5] for x in h if t0 <= x[0] <= end + 10)
    print(f"{name}: stall at {t0} s (2 s); per-second p95 over the 10 s before: median {base:.1f} ms; "
          f"worst in the 12 s from the stall {worst:.0f} ms, {errs} errors in them; "
          + (f"the median of five seconds' p95 back under {2 * base:.1f} ms from second {back}, "
             f"{back - end} s after the stall ended" if back else
             "never back under twice the level before"))


if __name__ == "__main__":
    mode, names = sys.argv[1], sys.argv[2:]
    if mode in ("runs", "search"):
        {"runs": runs, "search": search}[mode](names)
    else:
        for name in names:
            {"seconds": per_second, "stall": stall}[mode](name)
