#!/bin/sh
# bench/measure/scaling.sh OUT USERS: one measurement for docs/scaling.md's sizing
# model, in the several-hosts layout of its recipe: two conduitd "hosts"
# (masters of 1 worker each, on their own loopback ports) configured from
# etc/conduitd-host.conf.in, nginx in front from etc/nginx-upstream.conf.in,
# conduit-bench run with USERS virtual users through nginx (RAMP seconds of
# ramp, default 15; HOLD of hold, default 45; PROFILE, default the
# project's default).
#
# The database: a seeded primary (PRIMARY_HOST, PRIMARY_PORT: its socket
# folder and port; PRIMARY_DATA its data folder) and, with READS=standby,
# a streaming standby of it (STANDBY_HOST, STANDBY_PORT, STANDBY_DATA) that
# takes the reads (db_read); READS=primary (the default) leaves db_read out.
# SCALE and SEED: what the database was seeded with (default 0.05 and 1).
#
# Written to OUT: the bench's report (bench.txt, bench.json), /metrics of
# both hosts before and after, and cpu.txt: the CPU (user + system, from
# /proc, reaped children included) of conduitd, nginx, the primary's and
# the standby's process trees over the whole run, and the requests each
# host's /metrics counted over it, by method (a POST /api/users/login is
# a read: it writes nothing), and where the reads ran.  Every figure covers
# the same window (ramp, settle and hold), so ratios of them are CPU per
# request; IDLE seconds at rest before the run (default 10) give each
# one's CPU without requests, and the last column takes it off.  Load,
# nginx, conduitd and PostgreSQL share this machine's
# cores.  Not part of `make check` (t/integration/rolling.sh tests the
# recipe).
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
CONDUITD=${CONDUITD:-$top_srcdir/build/conduitd}
BENCH=${BENCH:-$top_srcdir/build/conduit-bench}
[ $# -eq 2 ] || { echo "usage: $0 OUT USERS" >&2; exit 2; }
OUT=$1 USERS=$2
RAMP=${RAMP:-15} HOLD=${HOLD:-45} IDLE=${IDLE:-10} READS=${READS:-primary}
SCALE=${SCALE:-0.05} SEED=${SEED:-1}
. "$top_srcdir/t/lib.sh"
for f in "$CONDUITD" "$BENCH" "$NGINX"; do
    [ -x "$f" ] || bail "$f is missing (script/build; apt-get install nginx-light)"
done
mkdir -p "$OUT"

# The recipe's file for one host; without a standby, db_read left out.
reads=
[ "$READS" = standby ] && reads=1
host_conf "$T/host.conf" "$PRIMARY_HOST,$STANDBY_HOST" "$PRIMARY_PORT,$STANDBY_PORT" \
    "${reads:+$STANDBY_HOST}" "${reads:+$STANDBY_PORT}" 1
cp "$T/host.conf" "$OUT/host.conf"
sed -i -e 's/^jwt_secret = .*/jwt_secret = (random)/' -e "s|$PWD/|\$PWD/|g" "$OUT/host.conf"

DB= conduitd_start -c "$T/host.conf" --bcrypt-cost 4
status_base
A_PID=$CONDUITD_PID A_PORT=$PORT A_SBASE=$SBASE
mv "$T/conduitd.log" "$T/a.log"
EXTRA_PIDS=$A_PID
DB= conduitd_start -c "$T/host.conf" --bcrypt-cost 4
status_base
B_SBASE=$SBASE
nginx_start "$T/nginx" "127.0.0.1:$A_PORT" "127.0.0.1:$PORT" ||
    bail "nginx did not start: $(cat "$T/nginx/out" "$T/nginx/error.log" 2>/dev/null)"
EXTRA_PIDS="$NGINX_PID $EXTRA_PIDS"
[ "$READS" = standby ] && sleep 2 # the standby pools connect

# ticks ROOT...: CPU ticks (utime + stime + cutime + cstime) of each root
# and every process below it.
ticks() {
    ps -e -o pid=,ppid= | awk -v roots="$*" '
        BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) want[r[i]] = 1 }
        { parent[$1] = $2; pids[++m] = $1 }
        END {
            for (changed = 1; changed;) {
                changed = 0
                for (i = 1; i <= m; i++)
                    if (!(pids[i] in want) && (parent[pids[i]] in want)) {
                        want[pids[i]] = 1
                        changed = 1
                    }
            }
            for (p in want) print p
        }' | while read -r p; do
        sed -e 's/^.*) //' "/proc/$p/stat" 2>/dev/null
    done | awk '{ t += $12 + $13 + $14 + $15 } END { print t + 0 }'
}
pg_root() { head -n 1 "$1/postmaster.pid"; }
snapshot() {
    echo "conduitd $(ticks "$A_PID" "$CONDUITD_PID")"
    echo "nginx $(ticks "$NGINX_PID")"
    echo "primary $(ticks "$(pg_root "$PRIMARY_DATA")")"
    [ -n "${STANDBY_DATA:-}" ] && echo "standby $(ticks "$(pg_root "$STANDBY_DATA")")"
    for h in A B; do
        eval "_sb=\$${h}_SBASE"
        curl -s --max-time 10 "$_sb/metrics" >"$OUT/metrics-$h-$1.txt"
    done
}
# At rest first: what the servers spend with no request (the standby
# probes and the primary's samples every 20 ms, timers, the walreceiver),
# taken off the run's figures below.
snapshot rest0 >"$T/rest0"
sleep "$IDLE"
snapshot rest1 >"$T/rest1"
snapshot before >"$T/before"
t0=$(date +%s.%N)
"$BENCH" run --port "$NPORT" --users "$USERS" --ramp "${RAMP}s" --hold "${HOLD}s" \
    --scale "$SCALE" --seed "$SEED" --server-pid "$A_PID" --server-pid "$CONDUITD_PID" \
    --nginx-pid "$NGINX_PID" --pg-data "$PRIMARY_DATA" ${PROFILE:+--profile "$PROFILE"} \
    --json "$OUT/bench.json" >"$OUT/bench.txt" 2>&1
rc=$?
t1=$(date +%s.%N)
snapshot after >"$T/after"

# The requests both hosts counted, by kind, from /metrics.
count() {
    cat "$OUT"/metrics-?-"$1".txt | awk '
        /^conduitd_http_requests_total\{/ {
            v = $NF
            if ($0 ~ /route="\/api\/users\/login"/ || $0 ~ /method="GET"/) r += v
            else if ($0 ~ /method="(POST|PUT|DELETE)"/) w += v
        }
        /^conduitd_db_standby_reads_total / { s += $NF }
        /^conduitd_db_primary_reads_total\{/ { p += $NF }
        END { printf "reads %d\nwrites %d\nstandby_reads %d\nprimary_reads %d\n", r, w, s, p }'
}
for f in rest0 rest1 before after; do count "$f" >>"$T/$f"; done
hz=$(getconf CLK_TCK)
awk -v hz="$hz" -v secs="$(echo "$t1 - $t0" | bc)" -v idle="$IDLE" '
    FILENAME ~ /rest0$/ { r0[$1] = $2; next }
    FILENAME ~ /rest1$/ { rest[$1] = ($2 - r0[$1]) / idle; next }
    FILENAME ~ /before$/ { b[$1] = $2; next }
    { d[$1] = $2 - b[$1]; order[++n] = $1 }
    END {
        req = d["reads"] + d["writes"]
        printf "window %.1f s, %d reads and %d writes answered (%.1f %% writes), %.0f req/s\n",
               secs, d["reads"], d["writes"], 100 * d["writes"] / req, req / secs
        printf "read statements: %d on the standby, %d on the primary instead\n",
               d["standby_reads"], d["primary_reads"]
        printf "%-9s %8s %8s %8s %12s %12s\n", "", "CPU s", "at rest", "% core", "us/request",
               "net of rest"
        for (i = 1; i <= n; i++) {
            k = order[i]
            if (k ~ /reads|writes/) continue
            cpu = d[k] / hz
            bg = rest[k] / hz * secs
            printf "%-9s %8.2f %8.2f %8.1f %12.1f %12.1f\n", k, cpu, bg, 100 * cpu / secs,
                   1e6 * cpu / req, 1e6 * (cpu - bg) / req
        }
    }' "$T/rest0" "$T/rest1" "$T/before" "$T/after" | tee "$OUT/cpu.txt"
tail -n 30 "$OUT/bench.txt"
exit $rc
