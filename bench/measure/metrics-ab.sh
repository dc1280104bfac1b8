#!/bin/sh
# bench/measure/metrics-ab.sh [BASELINE_CONDUITD]: what the metrics cost, side by
# side in one sitting: req/s and conduitd's CPU per request with the status
# listener off, and on with a scraper asking /metrics SCRAPE_HZ times a
# second (default 10, 150 times Prometheus' usual 15 s interval), and,
# given BASELINE_CONDUITD (a conduitd built without the metrics), the same
# load on it: the counting itself, which runs whether the listener is on
# or not.
#
# A private PostgreSQL seeded by conduit-seed at a tiny scale (0.002: 200
# users, 1,000 articles), conduitd -w WORKERS (2) --pool 4 on 127.0.0.1,
# and t/loadgen with CONNS (32) kept-alive clients for SECONDS (8) per run
# on each of two routes: /healthz (no database: the worst case for the
# counting's share) and /api/articles?limit=10 (ROUTES sets them).  ROUNDS
# (3) rounds, the sides interleaved so that a drift of the machine falls
# on every side (SIDES sets their order within a round, "base off on" by
# default); the median of the rounds is printed.  CPU is utime + stime of
# the master and its workers from /proc/PID/stat, over the run, divided by
# the requests answered: microseconds of conduitd CPU per request.
# Run from build/ (CONDUITD, LOADGEN and conduit-seed are taken from
# there):  top_srcdir=.. sh ../bench/measure/metrics-ab.sh [baseline/conduitd]
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
BASELINE=${1:-}
WORKERS=${WORKERS:-2} CONNS=${CONNS:-32} SECONDS_RUN=${SECONDS:-8} ROUNDS=${ROUNDS:-3}
SCRAPE_HZ=${SCRAPE_HZ:-10}
SEED_BIN=${CONDUIT_SEED:-$(pwd)/conduit-seed}
. "$top_srcdir/t/lib.sh"
LOG_LEVEL=notice
OWN=$CONDUITD

PG_NO_SCHEMA=1 pg_start
"$SEED_BIN" --scale 0.002 --bcrypt-cost 4 --db "$DB" -q >"$T/seed.out" 2>&1 ||
    bail "conduit-seed failed: $(cat "$T/seed.out")"

# cpu_ticks: utime + stime of the master and every child, in clock ticks.
cpu_ticks() {
    for _p in "$CONDUITD_PID" $(cat /proc/"$CONDUITD_PID"/task/*/children 2>/dev/null); do
        # The fields after the ")" of the name: utime and stime are 12th and 13th.
        sed 's/.*) //' /proc/"$_p"/stat 2>/dev/null | awk '{ print $12 + $13 }'
    done | awk '{ n += $1 } END { print n + 0 }'
}

# run SIDE URL: one measurement; appends "SIDE URL rps us_per_request" to $T/runs.
run() {
    side=$1 url=$2 scraper=
    case $side in
    base)
        CONDUITD=$BASELINE
        conduitd_start -w "$WORKERS" --pool 4
        ;;
    off)
        CONDUITD=$OWN
        conduitd_start -w "$WORKERS" --pool 4
        ;;
    on)
        CONDUITD=$OWN
        conduitd_start -w "$WORKERS" --pool 4 --status-listen 127.0.0.1:0
        sport=$(sed -n 's/.*status page.* on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/conduitd.log")
        pause=$(awk -v hz="$SCRAPE_HZ" 'BEGIN { print 1 / hz }')
        (
            while :; do
                curl -s -o /dev/null "http://127.0.0.1:$sport/metrics"
                sleep "$pause"
            done
        ) &
        scraper=$!
        ;;
    esac
    "$LOADGEN" -p "$PORT" -c 4 -k -d 1 -u "$url" >/dev/null 2>&1 # warm the pool and the caches
    c0=$(cpu_ticks)
    "$LOADGEN" -p "$PORT" -c "$CONNS" -k -d "$SECONDS_RUN" -u "$url" >"$T/load.out" 2>&1
    c1=$(cpu_ticks)
    [ -n "$scraper" ] && kill "$scraper" 2>/dev/null && wait "$scraper" 2>/dev/null
    stop_pid "$CONDUITD_PID"
    CONDUITD_PID=
    awk -v side="$side" -v url="$url" -v c0="$c0" -v c1="$c1" -v hz="$(getconf CLK_TCK)" '
        { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
        END {
            if (f["failed"] > 0) printf "# %s %s: %d failed\n", side, url, f["failed"] > "/dev/stderr"
            printf "%s %s %.0f %.1f\n", side, url, f["rps"], (c1 - c0) / hz * 1e6 / f["ok"]
        }' "$T/load.out" >>"$T/runs"
    tail -n 1 "$T/runs" >&2
}

sides=${SIDES:-off on}
[ -n "$BASELINE" ] && sides=${SIDES:-base off on}
routes=${ROUTES:-/healthz /api/articles?limit=10}
: >"$T/runs"
for r in $(seq "$ROUNDS"); do
    for url in $routes; do
        for side in $sides; do
            run "$side" "$url"
        done
    done
done

echo "conduitd -w $WORKERS --pool 4, t/loadgen -c $CONNS -k -d $SECONDS_RUN, median of $ROUNDS rounds;"
echo "on = --status-listen with /metrics scraped ${SCRAPE_HZ}x a second; base = $([ -n "$BASELINE" ] && echo "$BASELINE" || echo "not given")"
echo "$(nproc) cores shared by conduitd, PostgreSQL and the load generator"
printf '%-24s %-5s %10s %14s\n' route side req/s "CPU us/req"
for url in $routes; do
    for side in $sides; do
        rps=$(awk -v s="$side" -v u="$url" '$1 == s && $2 == u { print $3 }' "$T/runs" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
        cpu=$(awk -v s="$side" -v u="$url" '$1 == s && $2 == u { print $4 }' "$T/runs" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
        printf '%-24s %-5s %10s %14s\n' "$url" "$side" "$rps" "$cpu"
    done
done
echo "every run (side route req/s us/req):"
sed 's/^/  /' "$T/runs"
