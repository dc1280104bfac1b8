#!/bin/sh
# Coherence of the workers' caches, black box, through the HTTP API only
# (t/coherence.py; issue 17 part 2):
#   - the checker catches staleness: pointed at a deliberately stale proxy
#     (GETs answered from a copy) in front of a real instance it reports
#     stale reads and exits 1; across instances, a proxy 300 ms behind is
#     not seen within a 100 ms bound, and one that flaps between the last
#     two answers goes back to an old value;
#   - within one instance (A: -w 4, --cache on) COHERENCE_PAIRS (10,000)
#     write-then-read pairs from 4 threads, each request on a new
#     connection, find 0 stale reads: whatever worker answers, a read
#     after a write's answer shows the write (whole objects and lists:
#     articles, the global, author, tag and favorited lists, the feed,
#     comments, profiles, the user, the tags);
#   - the reads did cross workers (A's JSON access log: 73 % of the reads
#     were answered by another worker than their write's, 10 % required)
#     and the cache was used (hits on more than one worker of A), so the
#     test cannot pass against a server whose cache is off or that has
#     one worker;
#   - across instances (write through A, read through B, another master on
#     the same database) COHERENCE_ACROSS_PAIRS (300) pairs are each seen
#     on B within 2 s and, read again 250 ms after the write's answer
#     (past the notification's delay), never go back to the old value
#     (within the delay one worker of B may still answer it after another
#     answered the new one: each hears the notification on its own); the delays
#     (p50, p99, max) are reported, not bounded tighter: they are the
#     notification's, measured by the benchmark, not by a pass/fail test;
#   - the same pairs against an instance with --cache off (the control)
#     find 0 stale reads too.
# Against main at 5038fc2 (before the shared invalidation stamp: a worker
# learns of another worker's write through the notification alone) the
# within-instance run fails: 30, 31, 42 and 13 stale reads of 10,000 in
# four runs, all on what that cache holds (profiles, GET /api/user,
# /api/tags), read 0.1 to 29 ms after the write's answer; the across run
# saw a write on B after p50 2-3 ms, p99 15-36 ms (upper bounds).  46 s
# alone on 2 cores, 75 to 80 s beside script/test.
. "$top_srcdir/t/lib.sh"
PAIRS=${COHERENCE_PAIRS:-10000}
ACROSS_PAIRS=${COHERENCE_ACROSS_PAIRS:-300}
THREADS=4
BOUND_MS=2000
SEED=${COHERENCE_SEED:-17}
COH="$top_srcdir/t/coherence.py"
command -v jq >/dev/null || skip "jq not found"
[ -x "$PY" ] || skip "python3 not found"

started=$(date +%s)
# elapsed: seconds since the test began.
elapsed() { echo $(($(date +%s) - started)); }

# coh NAME ARGS...: runs t/coherence.py, its output in $T/coh-NAME.txt (the
# stale reads it printed shown as notes, at most 40 lines), its exit status
# in $COH_RC, the figures of its RESULT line as R_<name>.
coh() {
    _cn=$1
    shift
    $PY "$COH" "$@" >"$T/coh-$_cn.txt" 2>"$T/coh-$_cn.err"
    COH_RC=$?
    grep -v -e '^RESULT' -e '^#' "$T/coh-$_cn.txt" | head -n "${COH_SHOW:-30}" | sed 's/^/# /'
    grep '^#' "$T/coh-$_cn.txt"
    [ -s "$T/coh-$_cn.err" ] && sed 's/^/# stderr: /' "$T/coh-$_cn.err" | head -n 20
    for _k in writes pairs stale wrong errors unseen back first_stale p50_ms p99_ms max_ms; do
        eval "R_$_k=-1"
    done
    for _kv in $(grep '^RESULT' "$T/coh-$_cn.txt"); do
        case $_kv in *=*) eval "R_${_kv%%=*}=\${_kv#*=}" ;; esac
    done
}

# proxy_start NAME UPSTREAM [ARGS...]: the checker's stale proxy (not a
# test subject: it proves the checker catches what it must) in front of
# UPSTREAM on a free port; PROXY_URL, its pid in EXTRA_PIDS.
proxy_start() {
    _pn=$1 _up=$2
    shift 2
    $PY "$COH" --proxy http://127.0.0.1:0 "$_up" "$@" >"$T/proxy-$_pn.txt" 2>&1 &
    EXTRA_PIDS="$EXTRA_PIDS $!"
    PROXY_PID=$!
    wait_for 10 grep -q 'proxy listening' "$T/proxy-$_pn.txt" || bail "the stale proxy did not start within 10 s: $(tail -n 5 "$T/proxy-$_pn.txt")"
    PROXY_URL="http://$(sed -n 's/proxy listening on //p' "$T/proxy-$_pn.txt")"
}
proxy_stop() {
    stop_pid "$PROXY_PID"
    EXTRA_PIDS=$(echo "$EXTRA_PIDS" | tr ' ' '\n' | grep -vx "$PROXY_PID" | tr '\n' ' ')
}

# worker_hits: "index hits" of each worker of the instance at $BASE, from
# /healthz asked on new connections until all N_WORKERS have answered.
N_WORKERS=4
worker_hits() { each_worker $N_WORKERS '.cache.hits // 0' 400; }

pg_start
conduitd_start -w $N_WORKERS --bcrypt-cost 4 --cache on \
    --access-log "$T/a-access.log" --access-log-format json
A_PID=$CONDUITD_PID A_BASE=$BASE
mv "$T/conduitd.log" "$T/a.log" # A keeps writing to it
EXTRA_PIDS=$A_PID
CONDUITD_PID=
conduitd_start -w $N_WORKERS --bcrypt-cost 4 --cache on
B_BASE=$BASE
mv "$T/conduitd.log" "$T/b.log"
B_PID=$CONDUITD_PID

# ------------------------------------------------------------ the checker fails when it should
proxy_start stale "$A_BASE" --stale-ms 60000
coh selfcheck_within --within "$PROXY_URL" --pairs 1000 --threads $THREADS --seed "$SEED"
is "the checker, against a stale proxy in front of A: exit 1" "$COH_RC" 1
check "and stale reads reported ($R_stale of $R_pairs)" [ "$R_stale" -gt 0 ]
missed=
for k in favorite unfavorite follow unfollow user create update delete comment uncomment; do
    eval "_s=\${R_stale_$k:-0}"
    [ "$_s" -gt 0 ] || missed="$missed $k"
done
is "in every kind of write" "${missed:-none}" none
proxy_stop

proxy_start late "$B_BASE" --stale-ms 300
# --settle-ms 0: pairs follow each other closely, so the proxy's copies
# are younger than 300 ms when the next write's reads come.
coh selfcheck_late --across "$A_BASE" "$PROXY_URL" --pairs 100 --threads 2 --seed "$SEED" \
    --bound-ms 100 --settle-ms 0
is "the checker, across to a proxy 300 ms behind B, bound 100 ms: exit 1" "$COH_RC" 1
check "and writes not seen within the bound ($R_unseen)" [ "$R_unseen" -gt 0 ]
proxy_stop

proxy_start flap "$B_BASE" --flap
coh selfcheck_flap --across "$A_BASE" "$PROXY_URL" --pairs 100 --threads 2 --seed "$SEED"
is "the checker, across to a proxy that flaps between its last two answers: exit 1" "$COH_RC" 1
check "and old values after new ones ($R_back)" [ "$R_back" -gt 0 ]
proxy_stop
note "self-checks done at $(elapsed) s"

# ------------------------------------------------------------ within A
BASE=$A_BASE
worker_hits | sort -n >"$T/hits.before"
t0=$(date +%s)
coh within --within "$A_BASE" --pairs "$PAIRS" --threads $THREADS --seed "$SEED" --run "w$SEED"
within_s=$(($(date +%s) - t0))
note "within A: $R_pairs pairs after $R_writes writes in $within_s s"
check "within A: at least $PAIRS write-then-read pairs" [ "$R_pairs" -ge "$PAIRS" ]
is "within A: no request failed" "$R_errors" 0
is "within A: every write answered as the model says" "$R_wrong" 0
is "within A: 0 stale reads, each read on a new connection, any worker" "$R_stale" 0
is "within A: coherence.py exits 0" "$COH_RC" 0

worker_hits | sort -n >"$T/hits.after"
# index, hits before, hits after
hits=$(join "$T/hits.before" "$T/hits.after")
note "cache hits per worker of A (index, before, after): $(echo "$hits" | tr '\n' ';')"
is "A's $N_WORKERS workers answered /healthz" "$(echo "$hits" | wc -l)" $N_WORKERS
is "the cache answered reads of the run on more than one worker of A" \
    "$(echo "$hits" | awk '$3 > $2 { n++ } END { print (n >= 2) ? "yes" : "no: " n + 0 }')" yes

# The access log is flushed by each worker's timer: wait until every pair
# of the run is in it.
wait_for 10 sh -c "$PY '$COH' --spread '$T/a-access.log' --run 'w$SEED' |
    awk '{ split(\$2, a, \"=\"); exit !(a[2] >= $R_pairs) }'"
$PY "$COH" --spread "$T/a-access.log" --run "w$SEED" >"$T/spread.txt"
note "$(cat "$T/spread.txt")"
sp_reads=$(sed -n 's/.*reads=\([0-9]*\).*/\1/p' "$T/spread.txt")
sp_other=$(sed -n 's/.*other_worker=\([0-9]*\).*/\1/p' "$T/spread.txt")
sp_workers=$(sed -n 's/.*workers=\([0-9]*\).*/\1/p' "$T/spread.txt")
is "the access log has every read of the run" "${sp_reads:-0}" "$R_pairs"
is "the pairs used all $N_WORKERS workers of A" "${sp_workers:-0}" $N_WORKERS
check "at least a tenth of the reads were answered by another worker than their write's" \
    [ "$((${sp_other:-0} * 10))" -ge "${sp_reads:-1}" ]

# ------------------------------------------------------------ across A -> B
# The delays are measured alone (t/lib.sh), not beside the rest of the suite.
exclusive
t0=$(date +%s)
coh across --across "$A_BASE" "$B_BASE" --pairs "$ACROSS_PAIRS" --threads $THREADS \
    --seed "$SEED" --bound-ms $BOUND_MS
note "across A -> B: $R_pairs pairs in $(($(date +%s) - t0)) s, $R_first_stale stale on their first read; delay p50 $R_p50_ms ms, p99 $R_p99_ms ms, max $R_max_ms ms"
is "across: no request failed" "$R_errors" 0
is "across: every write seen on B within $BOUND_MS ms" "$R_unseen" 0
is "across: no old value after the new one was seen, once the delay has passed" "$R_back" 0
is "across: coherence.py exits 0" "$COH_RC" 0

shared

# ------------------------------------------------------------ control: cache off
stop_pid "$B_PID"
CONDUITD_PID=
conduitd_start -w $N_WORKERS --bcrypt-cost 4 --cache off
t0=$(date +%s)
coh control --within "$BASE" --pairs "$PAIRS" --threads $THREADS --seed "$SEED"
note "control (--cache off): $R_pairs pairs in $(($(date +%s) - t0)) s"
is "control, cache off: no request failed" "$R_errors" 0
is "control, cache off: 0 stale reads" "$R_stale" 0
is "control, cache off: coherence.py exits 0" "$COH_RC" 0
note "run time: $(elapsed) s"

done_testing
