# t/lib.sh: what every integration test shares.  Sourced, not run.
#
# Each test gets its own scratch folder ($T), its own conduitd master on
# 127.0.0.1 port 0 (the port is read back from the log, as libevent's
# regress tests do), and, when it asks for one, its own PostgreSQL cluster
# listening only on a unix socket in $T.  Everything started is stopped by
# pid on exit, whatever the outcome.
#
# The harness (automake's test driver) sets CONDUITD, top_srcdir and
# PG_BINDIR.  Exit status: 0 pass, 1 fail, 77 skip.

set -u

CONDUITD=${CONDUITD:-$(pwd)/conduitd}
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
top_srcdir=${top_srcdir:-$(pwd)}

T=$(mktemp -d "${TMPDIR:-/tmp}/conduitd-test.XXXXXX")
chmod 755 "$T"
TEST_NAME=$(basename "$0" .sh)
FAILS=0
LAST= STATUS= BODY=
CONDUITD_PID=
PG_STARTED=

# ------------------------------------------------------------ reporting
note() { printf '# %s\n' "$*"; }
pass() { printf 'ok - %s\n' "$*"; }
fail() { printf 'not ok - %s\n' "$*"; FAILS=$((FAILS + 1)); }
skip() { printf 'skip: %s\n' "$*"; cleanup; exit 77; }
bail() { printf 'Bail out! %s\n' "$*"; dump_logs; cleanup; exit 1; }

# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
    _d=$1; shift
    if "$@"; then pass "$_d"; else fail "$_d"; fi
}

# is DESCRIPTION GOT WANT
is() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', want '$3'"; fi
}

dump_logs() {
    if [ -f "$T/conduitd.log" ]; then
        note "---- conduitd.log (last 40 lines)"
        tail -n 40 "$T/conduitd.log" | sed 's/^/# /'
    fi
}

# done_testing: the last line of every test.
done_testing() {
    [ "$FAILS" -gt 0 ] && dump_logs
    cleanup
    if [ "$FAILS" -gt 0 ]; then
        note "$FAILS check(s) failed"
        exit 1
    fi
    exit 0
}

# ------------------------------------------------------------ processes
alive() { kill -0 "$1" 2>/dev/null; }

# wait_for SECONDS COMMAND...: polls every 50 ms until the command succeeds.
wait_for() {
    _n=$(awk -v s="$1" 'BEGIN { print int(s * 20) }'); shift
    while [ "$_n" -gt 0 ]; do
        "$@" && return 0
        sleep 0.05
        _n=$((_n - 1))
    done
    return 1
}

# Stops a pid: SIGTERM, then SIGKILL after 10 s.
stop_pid() {
    _p=$1
    alive "$_p" || return 0
    kill -TERM "$_p" 2>/dev/null
    wait_for 10 sh -c "! kill -0 $_p 2>/dev/null" || kill -KILL "$_p" 2>/dev/null
    wait "$_p" 2>/dev/null || true
}

# Every test's server logs are kept (LOG_ARCHIVE, set by make check) for
# t/integration/logs.sh, which greps them for secrets at the end.
archive_logs() {
    [ -n "${LOG_ARCHIVE:-}" ] && [ -d "$LOG_ARCHIVE" ] || return 0
    for _f in "$T"/*.log "$T"/*.out; do
        [ -f "$_f" ] && cp "$_f" "$LOG_ARCHIVE/$TEST_NAME.$$.$(basename "$_f")"
    done
    return 0
}

cleanup() {
    archive_logs
    # EXTRA_PIDS: more masters a test started (and their workers).
    for _x in ${EXTRA_PIDS:-}; do
        for _w in $(cat /proc/"$_x"/task/*/children 2>/dev/null); do kill -KILL "$_w" 2>/dev/null; done
        stop_pid "$_x"
    done
    EXTRA_PIDS=
    if [ -n "$CONDUITD_PID" ]; then
        # Workers of a master killed with -9 would be orphans: take them too.
        for _w in $(worker_pids 2>/dev/null); do kill -KILL "$_w" 2>/dev/null; done
        stop_pid "$CONDUITD_PID"
        CONDUITD_PID=
    fi
    [ -n "${STANDBY_STARTED:-}" ] && pg_standby_stop
    [ -n "$PG_STARTED" ] && pg_stop
    lock_drop
    [ -n "${KEEP_TMP:-}" ] || rm -rf "$T"
}
trap 'cleanup; exit 1' INT TERM HUP
# A test that dies on its own (set -u, a failed command in a subshell)
# still stops its server and its PostgreSQL.
trap 'cleanup' EXIT

# ------------------------------------------------------------ the suite's lock
# make -j check runs the tests side by side.  What a test measures in time
# (a latency or timeout bound, a process's CPU, a load generator's figures)
# must not share the machine with the rest of the suite, so every test
# holds the suite's lock (TEST_LOCK, a file make check names) shared from
# here, and the part that measures takes it exclusive (`exclusive`, or
# EXCLUSIVE=1 before sourcing this file: the whole test): it runs alone,
# the other tests side by side.  The unit tests take it shared too
# (t/locked).  Run by hand, without TEST_LOCK, a test takes no lock.
# The lock is held by a process of its own (flock on its own descriptor,
# then tail waiting for this shell to end), not by a descriptor of this
# shell: no process the test starts inherits it, so none can keep it past
# the test, and it goes with the test however the test ends.
SUITE_LOCK_PID=
lock_take() {
    [ -n "${TEST_LOCK:-}" ] && command -v flock >/dev/null || return 0
    lock_drop
    rm -f "$T/lock.fifo"
    mkfifo "$T/lock.fifo" || bail "cannot make $T/lock.fifo"
    # Started from a subshell: not a job of this shell, which a test's
    # `wait` would wait for.  It prints its pid once it holds the lock.
    (sh -c 'exec 9>>"$1" && flock -w 3600 "$2" 9 && echo $$ && exec tail -s 0.2 --pid="$3" -f /dev/null >/dev/null' \
        lock "$TEST_LOCK" "-$1" "$$" >"$T/lock.fifo" 2>/dev/null </dev/null &)
    read -r SUITE_LOCK_PID <"$T/lock.fifo" || SUITE_LOCK_PID=
    rm -f "$T/lock.fifo"
    [ -n "$SUITE_LOCK_PID" ] || bail "the suite's lock ($TEST_LOCK) was not granted ($1) within an hour"
}
lock_drop() {
    [ -n "$SUITE_LOCK_PID" ] || return 0
    kill "$SUITE_LOCK_PID" 2>/dev/null
    # Not a child: gone (or a zombie, its descriptors closed) through /proc.
    while [ -e /proc/"$SUITE_LOCK_PID" ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/"$SUITE_LOCK_PID"/stat 2>/dev/null; do
        sleep 0.01
    done
    SUITE_LOCK_PID=
}
# exclusive: from here on no other test of make check runs (until `shared`
# or the end); what ran beside this test until now is waited for.
exclusive() { lock_take x; }
# shared: the measuring part is over; the other tests may run again.
shared() { lock_take s; }
if [ -n "${EXCLUSIVE:-}" ]; then exclusive; else shared; fi

# ------------------------------------------------------------ PostgreSQL
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_start: a private cluster, socket in $T/pg, database "conduit" with the
# schema applied (unless PG_NO_SCHEMA is set); unix socket only, unless
# PG_LISTEN names addresses for TCP too (on PGPORT).  Exports PGHOST, PGPORT, PGUSER, PGDATABASE and DB (a
# connection string for --db).
pg_start() {
    [ -x "$PG_BINDIR/initdb" ] || skip "PostgreSQL 15 not found in $PG_BINDIR"
    mkdir -p "$T/pg"
    [ "$(id -u)" = 0 ] && chown postgres "$T/pg"
    # What the copy holds already: the database, and the schema.
    _made=
    if pg_template; then
        _from=$PG_TEMPLATE/bare _made=db
        [ -z "${PG_NO_SCHEMA:-}" ] && [ -d "$PG_TEMPLATE/schema" ] && _from=$PG_TEMPLATE/schema _made=schema
        cp -a "$_from" "$T/pg/data" || bail "cannot copy $_from"
    else
        pg_initdb "$T/pg/data" >"$T/pg/initdb.log" 2>&1 || bail "initdb failed: $(tail -n 5 "$T/pg/initdb.log")"
    fi
    cat >>"$T/pg/data/postgresql.conf" <<CONF
listen_addresses = '${PG_LISTEN:-}'
unix_socket_directories = '$T/pg'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
    export PGHOST="$T/pg" PGUSER=postgres PGDATABASE=conduit
    # Unix socket only, the port names the socket in $T/pg, which no other
    # test shares.  Over TCP it must be free on 127.0.0.1 (and the next one,
    # a standby's): another is tried when the one drawn was taken meanwhile.
    PGPORT=${PGPORT_TEST:-$((20000 + $$ % 12000))}
    export PGPORT
    _try=0
    while :; do
        if [ -n "${PG_LISTEN:-}" ] && [ -z "${PGPORT_TEST:-}" ]; then
            PGPORT=$(free_port 2) || bail "no free port on 127.0.0.1"
        fi
        pg_ctl_start && break
        _try=$((_try + 1))
        [ -n "${PG_LISTEN:-}" ] && [ -z "${PGPORT_TEST:-}" ] && [ "$_try" -lt 5 ] &&
            grep -q 'could not bind\|could not create any TCP/IP sockets' "$T/pg/log" && continue
        bail "PostgreSQL did not start: $(tail -n 5 "$T/pg/log")"
    done
    PG_STARTED=1
    [ -n "$_made" ] || as_pg "$PG_BINDIR/createdb" -h "$PGHOST" -p "$PGPORT" conduit || bail "createdb failed"
    DB="host=$PGHOST port=$PGPORT user=postgres dbname=conduit"
    export DB
    [ -n "${PG_NO_SCHEMA:-}" ] || [ "$_made" = schema ] && return 0
    psql -X -q -v ON_ERROR_STOP=1 -f "$top_srcdir/sql/schema.sql" >"$T/pg/schema.log" 2>&1 ||
        { cat "$T/pg/schema.log"; bail "schema.sql failed"; }
    DB="host=$PGHOST port=$PGPORT user=postgres dbname=conduit"
    export DB
}

pg_initdb() {
    as_pg "$PG_BINDIR/initdb" -D "$1" -E UTF8 --locale=C.UTF-8 -A trust -U postgres
}

# pg_template: the clusters pg_start copies, made once for the whole make
# check (PG_TEMPLATE, a folder it names and empties first) by the first
# test that asks while the others wait: initdb, createdb and the schema
# take seconds on a busy machine, a copy a fraction of one.  In it, bare/
# (the database "conduit", empty: PG_NO_SCHEMA) and schema/ (with
# sql/schema.sql applied; missing when it failed, so that pg_start applies
# it and says why).  1 without PG_TEMPLATE (a test run by hand) or when
# initdb failed there: pg_start makes its cluster itself.
pg_template() {
    [ -n "${PG_TEMPLATE:-}" ] || return 1
    (
        if command -v flock >/dev/null; then flock -w 300 8 || exit 1; fi
        [ -f "$PG_TEMPLATE/made" ] && exit 0
        rm -rf "$PG_TEMPLATE" && mkdir -p "$PG_TEMPLATE" || exit 1
        [ "$(id -u)" = 0 ] && chown postgres "$PG_TEMPLATE"
        _tl=$PG_TEMPLATE/log
        pg_initdb "$PG_TEMPLATE/bare" >"$_tl" 2>&1 || exit 1
        # Started on a socket in its folder, to make the database, then
        # the copy with the schema.
        _tpg() { as_pg "$PG_BINDIR/pg_ctl" -D "$1" -l "$_tl.$2" -w -t 60 -m fast \
            -o "-c listen_addresses='' -k $PG_TEMPLATE -p 5432" "$2" >>"$_tl" 2>&1; }
        _tpg "$PG_TEMPLATE/bare" start || exit 1
        as_pg "$PG_BINDIR/createdb" -h "$PG_TEMPLATE" -p 5432 conduit >>"$_tl" 2>&1
        _ok=$?
        _tpg "$PG_TEMPLATE/bare" stop || exit 1
        [ "$_ok" = 0 ] || exit 1
        cp -a "$PG_TEMPLATE/bare" "$PG_TEMPLATE/schema" && _tpg "$PG_TEMPLATE/schema" start || exit 1
        psql -X -q -v ON_ERROR_STOP=1 -h "$PG_TEMPLATE" -p 5432 -U postgres -d conduit \
            -f "$top_srcdir/sql/schema.sql" >>"$_tl" 2>&1
        _ok=$?
        _tpg "$PG_TEMPLATE/schema" stop || exit 1
        [ "$_ok" = 0 ] || rm -rf "$PG_TEMPLATE/schema"
        rm -f "$PG_TEMPLATE"/*/postmaster.opts
        : >"$PG_TEMPLATE/made"
    ) 8>>"$PG_TEMPLATE.lock"
}

# free_port [N]: a TCP port free on 127.0.0.1 now, and the N - 1 after it,
# drawn at random below the kernel's ephemeral range (32768 and up), where
# the port-0 listeners and the clients of the tests beside this one take
# theirs.  The caller binds it soon after, and draws again when it was
# taken meanwhile.
free_port() {
    $PY - "${1:-1}" <<'EOF'
import random, socket, sys
n = int(sys.argv[1])
for _ in range(200):
    p = random.randrange(10000, 32000)
    socks = []
    try:
        for q in range(p, p + n):
            s = socket.socket()
            socks.append(s)
            s.bind(("127.0.0.1", q))
    except OSError:
        continue
    finally:
        for s in socks:
            s.close()
    print(p)
    sys.exit(0)
sys.exit(1)
EOF
}

# seeded_reference: the small seeded dataset (conduit-seed, scale 0.002)
# in a cluster of the test's own, and an instance of one worker with no
# cache on it, $OFF: the reference a cached instance's answers are compared
# with (its log is $T/off.log; it is stopped with the rest).
seeded_reference() {
    PG_NO_SCHEMA=1 pg_start
    SEED=${CONDUIT_SEED:-$(pwd)/conduit-seed}
    "$SEED" --scale 0.002 --bcrypt-cost 4 --db "$DB" >"$T/seed.log" 2>&1 || bail "seed failed"
    conduitd_start -w 1 --bcrypt-cost 4
    OFF=$BASE
    EXTRA_PIDS=$CONDUITD_PID
    mv "$T/conduitd.log" "$T/off.log"
    CONDUITD_PID=
}

# json_list SQL: the query's rows (one column) as a JSON list of strings.
json_list() {
    psql -X -q -At -v ON_ERROR_STOP=1 -c "$1" |
        $PY -c 'import json,sys; print(json.dumps([l.rstrip("\n") for l in sys.stdin]))'
}

# db_digest: one digest of every row of every table (a request that must
# change nothing leaves it as it was).
db_digest() {
    for _t in users articles tags article_tags favorites follows comments; do
        psql -X -A -t -c "select count(*), md5(coalesce(string_agg(t::text, '|' order by t::text), '')) from $_t t"
    done | md5sum | cut -c1-32
}

pg_ctl_start() {
    as_pg "$PG_BINDIR/pg_ctl" -D "$T/pg/data" -l "$T/pg/log" -w -t 30 \
        -o "-p $PGPORT" start >/dev/null
}

pg_ctl_stop() {
    as_pg "$PG_BINDIR/pg_ctl" -D "$T/pg/data" -w -t 30 -m "${1:-fast}" stop >/dev/null
}

pg_stop() {
    pg_ctl_stop immediate 2>/dev/null
    PG_STARTED=
}

# pg_standby_start [CONF_LINE...]: a streaming standby of the cluster
# pg_start made: a base backup (pg_basebackup -R -X stream, with a fast
# checkpoint: the default spread one took 98 s of a 2 s start on this
# loaded machine) in $T/pg2, its
# own socket folder there and port PGPORT + 1, each CONF_LINE appended to
# its postgresql.conf.  Waits until it streams.  Sets STANDBY_HOST,
# STANDBY_PORT and STANDBY_DB (a connection string for it); stopped
# (immediate) on exit, or by pg_standby_stop.
pg_standby_start() {
    [ -x "$PG_BINDIR/pg_basebackup" ] || skip "pg_basebackup not found in $PG_BINDIR"
    STANDBY_HOST=$T/pg2
    mkdir -p "$STANDBY_HOST"
    [ "$(id -u)" = 0 ] && chown postgres "$STANDBY_HOST"
    as_pg "$PG_BINDIR/pg_basebackup" -h "$PGHOST" -p "$PGPORT" -U postgres -D "$STANDBY_HOST/data" \
        -R -X stream -c fast >"$STANDBY_HOST/basebackup.log" 2>&1 ||
        bail "pg_basebackup failed: $(cat "$STANDBY_HOST/basebackup.log")"
    printf "unix_socket_directories = '%s'\n" "$STANDBY_HOST" >>"$STANDBY_HOST/data/postgresql.conf"
    for _l in "$@"; do printf '%s\n' "$_l" >>"$STANDBY_HOST/data/postgresql.conf"; done
    STANDBY_PORT=$((PGPORT + 1))
    _try=0
    until as_pg "$PG_BINDIR/pg_ctl" -D "$STANDBY_HOST/data" -l "$STANDBY_HOST/log" -w -t 30 \
        -o "-p $STANDBY_PORT" start >/dev/null; do
        # Over TCP the port after the primary's was free when pg_start
        # drew it, and may have been taken since.
        _try=$((_try + 1))
        if [ "$_try" -ge 5 ] || ! grep -q 'could not bind\|could not create any TCP/IP sockets' "$STANDBY_HOST/log"; then
            bail "the standby did not start: $(tail -5 "$STANDBY_HOST/log")"
        fi
        STANDBY_PORT=$(free_port) || bail "no free port on 127.0.0.1"
    done
    STANDBY_STARTED=1
    STANDBY_DB="host=$STANDBY_HOST port=$STANDBY_PORT user=postgres dbname=conduit"
    wait_for 10 sh -c "[ \"\$(psql -X -At -c 'select count(*) from pg_stat_replication')\" = 1 ]" ||
        bail "the standby does not stream"
}

pg_standby_stop() {
    as_pg "$PG_BINDIR/pg_ctl" -D "$STANDBY_HOST/data" -w -t 30 -m "${1:-immediate}" stop \
        >/dev/null 2>&1
    STANDBY_STARTED=
}

# standby_psql ARGS...: psql on the standby (quiet, unaligned, tuples only).
standby_psql() { psql -X -At -h "$STANDBY_HOST" -p "$STANDBY_PORT" "$@"; }

# ------------------------------------------------------------ conduitd
# conduitd_start [FLAGS...]: starts a master in the foreground (as a child
# of this shell), logging to $T/conduitd.log, and waits until it says it
# listens and every worker is ready.  Sets CONDUITD_PID and PORT, BASE.
# With CONDUITD_SETSID=1 the master leads a process group of its own
# (setsid), which a test may signal whole (kill -SIG -- -$CONDUITD_PID)
# without hitting itself.
conduitd_start() {
    _root=
    [ "$(id -u)" = 0 ] && _root=--allow-root
    : >"$T/conduitd.log"
    ${CONDUITD_SETSID:+setsid} "$CONDUITD" -b 127.0.0.1:0 --dev $_root --log "$T/conduitd.log" \
        --log-level "${LOG_LEVEL:-info}" ${DB:+--db "$DB"} "$@" \
        </dev/null >>"$T/conduitd.out" 2>&1 &
    CONDUITD_PID=$!
    wait_for 10 grep -q 'listening on ' "$T/conduitd.log" ||
        bail "conduitd did not start: $(cat "$T/conduitd.out")"
    # setsid forks only when it leads a group already, which a job of this
    # shell does not: the master is the job itself.  Said, not assumed.
    [ -z "${CONDUITD_SETSID:-}" ] || [ "$(ps -o pgid= -p "$CONDUITD_PID" | tr -d ' ')" = "$CONDUITD_PID" ] ||
        bail "setsid did not make the master ($CONDUITD_PID) lead its own group"
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$T/conduitd.log" | head -n 1)
    BASE="http://127.0.0.1:$PORT"
    wait_for 10 all_workers_ready || bail "workers did not become ready"
}

# Workers are the master's children whose title says "conduitd: worker"
# (or, under valgrind, which shows its own command line, whose thread name
# does: the first 15 bytes of the title).
worker_pids() {
    for _c in $(cat /proc/"$CONDUITD_PID"/task/*/children 2>/dev/null); do
        case "$(cat /proc/"$_c"/cmdline 2>/dev/null | tr '\0' ' ')" in
        *"conduitd: worker"*) echo "$_c" ;;
        *) [ "$(cat /proc/"$_c"/comm 2>/dev/null)" = "conduitd: worke" ] && echo "$_c" ;;
        esac
    done
}

worker_count() { worker_pids | wc -l | tr -d ' '; }

# workers_are N: the master has N workers now (for wait_for).
workers_are() { [ "$(worker_count)" -eq "$1" ]; }

# The master logs "worker N (pid P) ready" for each; count live ready ones.
all_workers_ready() {
    _want=$(grep -c 'ready' "$T/conduitd.log")
    [ "$_want" -gt 0 ] && [ "$(worker_count)" -gt 0 ] &&
        [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz")" = 200 ]
}

# http_raw METHOD PATH [BODY [AUTHORIZATION [CURL-ARGS...]]]: one request
# with curl, the only one of the tests'; $STATUS (000 when curl itself
# failed), $BODY, the headers in $T/hdr, curl's complaint in $T/curl.err.
# BODY is sent as JSON, AUTHORIZATION is the whole header value; either may
# be empty.  CURL-ARGS go before the URL (--path-as-is, -H 'Expect:', ...).
http_raw() {
    _m=$1 _p=$2 _b=${3:-} _a=${4:-}
    shift 2; [ $# -gt 0 ] && shift; [ $# -gt 0 ] && shift
    rm -f "$T/body" "$T/hdr"
    set -- -s -S -o "$T/body" -D "$T/hdr" -w '%{http_code}' -X "$_m" --max-time 10 "$@"
    [ -n "$_b" ] && set -- "$@" -H 'Content-Type: application/json' --data-binary "$_b"
    [ -n "$_a" ] && set -- "$@" -H "Authorization: $_a"
    STATUS=$(curl "$@" "$BASE$_p" 2>"$T/curl.err") || STATUS=000
    BODY=$(cat "$T/body" 2>/dev/null)
}

# http METHOD PATH [BODY [TOKEN]]: http_raw with "Authorization: Token
# TOKEN"; $LAST says what was asked, for detail.
http() {
    LAST="$1 $2${3:+ $3}${4:+ [with a token]}"
    http_raw "$1" "$2" "${3:-}" "${4:+Token $4}"
}

# register NAME: registers NAME (email NAME@example.io, password pw-NAME);
# prints the new user's token, or bails.
register() {
    http POST /api/users "{\"user\":{\"username\":\"$1\",\"email\":\"$1@example.io\",\"password\":\"pw-$1\"}}"
    [ "$STATUS" = 201 ] || bail "register $1: $STATUS $BODY"
    printf '%s' "$BODY" | jq -r .user.token
}

# short TEXT [N]: TEXT on one line, at most N bytes (400).
short() { printf '%s' "$1" | tr '\r\n' '  ' | head -c "${2:-400}"; }

# detail: the last request and its answer, as notes under a failure.
detail() {
    note "    request: $(short "$LAST" 300)"
    note "    got: $STATUS $(short "$BODY")"
}

# st DESCRIPTION WANT: the last status is WANT.
st() {
    if [ "$STATUS" = "$2" ]; then pass "$1"; else fail "$1: status $STATUS, want $2"; detail; fi
}

# healthz_worker: which worker answered /healthz (its index), or empty.
healthz_worker() {
    curl -s --max-time 5 "$BASE/healthz" | jq -r '.worker // empty' 2>/dev/null
}

# each_worker N FILTER [TRIES]: "index value" of the jq FILTER over the
# /healthz of each of the N workers of the instance at $BASE, one line each
# (asked on new connections until all N have answered, TRIES at most: 300).
each_worker() {
    _seen=
    for _i in $(seq 1 "${3:-300}"); do
        _h=$(curl -s --max-time 5 "$BASE/healthz") || continue
        _w=$(printf '%s' "$_h" | jq -r .worker)
        case " $_seen " in *" $_w "*) continue ;; esac
        _seen="$_seen $_w"
        printf '%s %s\n' "$_w" "$(printf '%s' "$_h" | jq -c "$2")"
        [ "$(echo $_seen | wc -w)" -ge "$1" ] && break
    done
}

has_test_hooks() { "$CONDUITD" -V | grep -q 'test-hooks'; }
# A SANITIZE=1 build: latency and memory figures are ASan's, not the server's.
is_sanitized() { "$CONDUITD" -V | grep -q 'sanitizers'; }

# ------------------------------------------------------------ load
# The fault tests put the server under a bounded load with t/loadgen (a
# small C client: see its header for the flags and the figures it prints).
LOADGEN=${LOADGEN:-$(pwd)/t/loadgen}
has_loadgen() { [ -x "$LOADGEN" ]; }

# load_start NAME [LOADGEN FLAGS...]: runs it in the background against
# $PORT; the figures go to $T/NAME.out.  LOAD_PID is its pid.
load_start() {
    _ln=$1; shift
    has_loadgen || bail "t/loadgen is not built ($LOADGEN)"
    "$LOADGEN" -p "$PORT" "$@" >"$T/$_ln.out" 2>"$T/$_ln.err" &
    LOAD_PID=$!
}

# load_wait NAME [PID]: waits for it and sets L_<figure> for each figure
# it printed (L_requests, L_failed, L_p99_ms, ...).
load_wait() {
    wait "${2:-$LOAD_PID}" || fail "loadgen $1 exited with $?: $(cat "$T/$1.err")"
    note "load $1: $(cat "$T/$1.out")"
    # No figures (loadgen failed): -1 everywhere, so the checks fail, not the shell.
    for _k in requests ok failed timeouts s2xx s503 s5xx_other retry_after_missing p50_ms p99_ms \
        max_ms fail_unknown fail_pids idle_open_fail idle_closed idle_close_min_ms \
        idle_close_max_ms slow_closed slow_close_max_ms eof_before_response reset_before_response \
        partial send_failed refused; do
        eval "L_$_k=-1"
    done
    for _kv in $(cat "$T/$1.out"); do
        case $_kv in *=*) eval "L_${_kv%%=*}=\${_kv#*=}" ;; esac
    done
}

# lines_at_least FILE N: the file (a loadgen CSV being written) has N lines.
lines_at_least() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }

# ms_now: wall-clock milliseconds, the clock of loadgen's CSV (-o).
ms_now() { date +%s%3N; }

# cpu_ticks PID: the process's user + system time, in clock ticks
# (getconf CLK_TCK).  The fields are counted after the name, which has a
# space in a worker's ("conduitd: worke").
cpu_ticks() { sed 's/.*) //' /proc/"$1"/stat | awk '{ print $12 + $13 }'; }

# fcmp A OP B: compares two decimal numbers with awk ("<", "<=", ">", ...).
fcmp() { awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }"; }

# ------------------------------------------------------------ nginx
# nginx_start DIR UPSTREAM...: nginx in front of the conduitd instances at
# UPSTREAM (HOST:PORT each), configured from the template `make install`
# ships (etc/nginx-upstream.conf.in) as a deployment would be, on a free
# loopback port (free_port).  Its files go in DIR.  Sets NPORT and NGINX_PID (the
# caller stops it); 1 when it did not start.
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}

# nginx_conf DIR NOFILE HTTP: writes DIR/nginx.conf, a private nginx in the
# foreground (pid, logs and temporary files in DIR) whose http block is
# HTTP; DIR/tmp must exist and be writable by nginx's workers.
nginx_conf() {
    cat >"$1/nginx.conf" <<CONF
daemon off;
worker_processes 1;
worker_rlimit_nofile $2;
pid $1/nginx.pid;
error_log $1/error.log warn;
events { worker_connections $(($2 / 2)); }
http {
    access_log off;
    client_body_temp_path $1/tmp/body;
    proxy_temp_path $1/tmp/proxy;
    fastcgi_temp_path $1/tmp/fastcgi;
    uwsgi_temp_path $1/tmp/uwsgi;
    scgi_temp_path $1/tmp/scgi;
    $3
}
CONF
}

nginx_start() {
    _nd=$1; shift
    _servers=
    for _u in "$@"; do _servers="${_servers}server $_u max_fails=3 fail_timeout=10s; "; done
    nginx_listen "$_nd" /api/tags nginx_upstream_conf
}
# nginx_upstream_conf PORT: nginx_start's configuration, listening on PORT.
nginx_upstream_conf() {
    sed -e "s|@UPSTREAM_SERVERS@|$_servers|" -e "s|listen 80;|listen 127.0.0.1:$1;|" \
        -e '/listen \[::\]:80;/d' "$top_srcdir/etc/nginx-upstream.conf.in" >"$_nd/upstream.conf"
    nginx_conf "$_nd" "$(ulimit -Hn)" "include $_nd/upstream.conf;"
}

# nginx_listen DIR PATH CONF: a private nginx (nginx_conf's) on a free
# loopback port, answering GET PATH.  CONF PORT is a command that writes
# DIR/nginx.conf listening on PORT.  Sets NPORT and NGINX_PID (the caller
# stops it); 1 when it did not start on any of five ports.
nginx_listen() {
    mkdir -p "$1/tmp"
    chmod 777 "$1/tmp"
    for _try in 1 2 3 4 5; do
        NPORT=$(free_port) || return 1
        rm -f "$1/nginx.pid"
        "$3" "$NPORT"
        "$NGINX" -p "$1" -c "$1/nginx.conf" </dev/null >"$1/out" 2>&1 &
        NGINX_PID=$!
        # nginx writes its pid file once it holds its port (when the port
        # was taken meanwhile, it exits instead): only then is an answer on
        # the port its own, not another test's server's.
        wait_for 5 sh -c "[ \"\$(cat '$1/nginx.pid' 2>/dev/null)\" = $NGINX_PID ] || ! kill -0 $NGINX_PID" &&
            alive "$NGINX_PID" &&
            wait_for 5 sh -c "curl -s -o /dev/null http://127.0.0.1:$NPORT$2" && return 0
        stop_pid "$NGINX_PID"
    done
    NGINX_PID=
    return 1
}

# ------------------------------------------------------------ /metrics
# status_base [LOG]: SPORT and SBASE, the status listener of the instance
# started with --status-listen 127.0.0.1:0, read from its log (default: the
# one conduitd_start writes).
status_base() {
    SPORT=$(sed -n 's/.*status page.* on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "${1:-$T/conduitd.log}" | head -n 1)
    SBASE="http://127.0.0.1:$SPORT"
}
# Every scrape is parsed by a real Prometheus text parser (Debian's
# python3-prometheus-client); a test that scrapes skips without it.
PY=/usr/bin/python3
has_prom_parser() { $PY -c 'import prometheus_client' 2>/dev/null; }

# scrape NAME: /metrics into $T/NAME.prom, and the samples as the parser
# read them into $T/NAME.samples, one a line: name{k="v",...} value, the
# labels sorted.  A scrape the parser refuses fails the test.
scrape() {
    curl -s -S --max-time 10 -D "$T/$1.headers" -o "$T/$1.prom" "$SBASE/metrics" ||
        fail "scrape $1: curl failed"
    $PY - "$T/$1.prom" >"$T/$1.samples" 2>"$T/$1.parse-err" <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
types = {}
for fam in text_string_to_metric_families(text):
    types[fam.name] = fam.type
    for s in fam.samples:
        labels = ",".join('%s="%s"' % (k, v) for k, v in sorted(s.labels.items()))
        print("%s{%s} %s" % (s.name, labels, repr(float(s.value))))
for name, t in sorted(types.items()):
    print("TYPE %s %s" % (name, t))
EOF
    [ $? -eq 0 ] || fail "scrape $1: the parser refused it: $(tail -n 1 "$T/$1.parse-err")"
}
# sample NAME SERIES: the value of one series of scrape NAME, as an integer
# (-1 when absent).  SERIES is written as scrape() prints it.
sample() {
    awk -v s="$2" '$1 == s { printf "%d\n", $2; found = 1 } END { if (!found) print -1 }' \
        "$T/$1.samples"
}
# total NAME PREFIX: the sum of every series that begins with PREFIX.
total() {
    awk -v p="$2" 'index($1, p) == 1 { n += $2 } END { printf "%d\n", n }' "$T/$1.samples"
}
# metric SERIES: its value in $SBASE/metrics now, as written (no parser),
# or empty when absent.
metric() { curl -s --max-time 10 "$SBASE/metrics" | awk -v n="$1" '$1 == n { print $2; exit }'; }
# fsample NAME SERIES: the same as the parser printed it (a float, "nan"), or "absent".
fsample() {
    awk -v s="$2" '$1 == s { print $2; found = 1 } END { if (!found) print "absent" }' "$T/$1.samples"
}

# ------------------------------------------------------------ hosts
# host_conf FILE DB_HOSTS DB_PORTS [STANDBY_HOSTS STANDBY_PORTS [WORKERS
# [POOL]]]: one host's file from etc/conduitd-host.conf.in, the several-
# hosts recipe, filled in as an operator would: listen and status_listen
# on 127.0.0.1:0, the one secret of the deployment (HOST_SECRET, drawn
# once), workers and pool when given.  Without STANDBY_HOSTS, no db_read.
host_conf() {
    : "${HOST_SECRET:=$(openssl rand -hex 32)}"
    sed -e "s|@LISTEN@|127.0.0.1:0|" -e "s|@STATUS_LISTEN@|127.0.0.1:0|" \
        -e "s|@DB_HOSTS@|$2|" -e "s|@DB_PORTS@|$3|" \
        -e "s|@STANDBY_HOSTS@|${4:-}|" -e "s|@STANDBY_PORTS@|${5:-}|" \
        -e "s|@JWT_SECRET@|$HOST_SECRET|" -e "s|^workers = auto|workers = ${6:-auto}|" \
        -e "s|^pool = 4|pool = ${7:-4}|" "$top_srcdir/etc/conduitd-host.conf.in" >"$1"
    [ -n "${4:-}" ] || sed -i -e '/^db_read/d' "$1"
    chmod 600 "$1"
}

# ------------------------------------------------------------ tokens
# The --dev secret every test server signs with: forged tokens use it.
SECRET=conduitd-development-secret-not-for-production-use
b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
b64url_dec() {
    _s=$(printf '%s' "$1" | tr '_-' '/+')
    case $((${#_s} % 4)) in 2) _s="$_s==" ;; 3) _s="$_s=" ;; esac
    printf '%s' "$_s" | openssl base64 -d -A 2>/dev/null
}
# jwt HEADER_JSON PAYLOAD_JSON [SECRET]: an HS256 token.
jwt() {
    _jh=$(printf '%s' "$1" | b64url)
    _jp=$(printf '%s' "$2" | b64url)
    _js=$(printf '%s' "$_jh.$_jp" | openssl dgst -sha256 -hmac "${3:-$SECRET}" -binary | b64url)
    printf '%s' "$_jh.$_jp.$_js"
}

# ------------------------------------------------------------ strict clients
# The drain tests' strict kept-alive clients (loadgen -K: the next request
# goes on the same connection the moment a response is read, a new
# connection only after "Connection: close", nothing retried) read and
# write: strict_setup registers a user and writes an article for them to
# comment on (sets STRICT_TOKEN, STRICT_SLUG; the server needs the
# database).  strict_start NAME READERS WRITERS SECONDS: WRITERS clients
# POST comments, READERS clients GET an article list; strict_wait NAME
# waits for both and asserts that no request failed and that the comments
# stored are exactly the comments answered.  strict_wait NAME stop: the
# server stops meanwhile, so a client that follows a "Connection: close"
# may find new connections refused; those are the only failures allowed.
strict_setup() {
    http POST /api/users '{"user":{"username":"strict","email":"strict@example.io","password":"pw-strict"}}'
    [ "$STATUS" = 201 ] || bail "strict_setup: register got $STATUS: $BODY"
    STRICT_TOKEN=$(printf '%s' "$BODY" | jq -r .user.token)
    http POST /api/articles '{"article":{"title":"Drained","description":"d","body":"b","tagList":["t"]}}' "$STRICT_TOKEN"
    [ "$STATUS" = 201 ] || bail "strict_setup: article got $STATUS: $BODY"
    STRICT_SLUG=$(printf '%s' "$BODY" | jq -r .article.slug)
}
comments_stored() { psql -X -A -t -c 'SELECT count(*) FROM comments'; }
strict_start() {
    _sn=$1
    STRICT_STORED0=$(comments_stored)
    load_start "${_sn}_get" -K -c "$2" -d "$4" -u '/api/articles?limit=10' -t 5000
    STRICT_GET_PID=$LOAD_PID
    load_start "${_sn}_post" -K -c "$3" -d "$4" -m POST -u "/api/articles/$STRICT_SLUG/comments" \
        -b '{"comment":{"body":"sent on a kept-alive connection"}}' \
        -H "Authorization: Token $STRICT_TOKEN" -t 5000
    STRICT_POST_PID=$LOAD_PID
}
strict_wait() {
    _sn=$1
    for _kind in get post; do
        eval "_pid=\$STRICT_$(echo $_kind | tr a-z A-Z)_PID"
        load_wait "${_sn}_$_kind" "$_pid"
        [ -s "$T/${_sn}_$_kind.err" ] && sed 's/^/# /' "$T/${_sn}_$_kind.err" | head -n 20
        _ok=$L_requests _refused=0
        if [ "${2:-}" = stop ]; then _ok=$((L_requests - L_refused)) _refused=$L_refused; fi
        is "$_sn: strict kept-alive ${_kind}s: 0 failed ($L_eof_before_response cut before a response)" \
            "$((L_failed - _refused))" 0
        is "$_sn: every $_kind answered 2xx" "$L_s2xx" "$_ok"
    done
    _stored=$(( $(comments_stored) - STRICT_STORED0 ))
    note "$_sn: $L_s2xx comments answered, $_stored stored"
    is "$_sn: every comment stored was answered, and only those" "$_stored" "$L_s2xx"
    check "$_sn: the writes were real (over 200 answered)" [ "$L_s2xx" -gt 200 ]
}
