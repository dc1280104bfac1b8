#!/bin/sh
# conduitd --init-db applies the embedded schema once, says so the second
# time, upgrades a database of version 1 to version 2 (the
# Idempotency-Key table) without touching its data, and fails cleanly
# (exit 1, a reason) when it cannot connect.
. "$top_srcdir/t/lib.sh"
PG_NO_SCHEMA=1 pg_start

"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
is "--init-db on an empty database exits 0" "$?" 0
check "and reports the version" grep -q 'schema version 2 applied' "$T/out"
is "the tables exist" "$(psql -X -At -c "select count(*) from information_schema.tables where table_name in ('users','articles','comments','follows','favorites','tags')")" 6

"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
is "a second --init-db exits 0" "$?" 0
check "and changes nothing" grep -q 'already applied (version 2)' "$T/out"

# A database of version 1: the current schema without what version 2 added.
psql -X -q -v ON_ERROR_STOP=1 -c "DROP FUNCTION conduit_idempotency_answer(bigint, text, text)" \
    -c "DROP TABLE idempotency_keys" -c "DELETE FROM schema_version WHERE version = 2" \
    -c "INSERT INTO users (username, email, password_hash) VALUES ('old', 'old@x', 'h')" ||
    bail "cannot make a version 1 database"
"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
is "--init-db on a database of version 1 exits 0" "$?" 0
check "and says it upgraded it" grep -q 'upgraded from version 1 to version 2' "$T/out"
is "the Idempotency-Key table exists" "$(psql -X -At -c "select to_regclass('idempotency_keys') is not null")" t
is "the data is kept" "$(psql -X -At -c "select count(*) from users where username = 'old'")" 1
"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
check "a second --init-db changes nothing" grep -q 'already applied (version 2)' "$T/out"

DATABASE_URL="postgresql:///nosuchdb?host=$PGHOST&port=$PGPORT&user=postgres" \
    "$CONDUITD" --init-db --dev >"$T/out" 2>&1
is "an unreachable database exits 1" "$?" 1
check "with the reason" grep -q 'cannot connect' "$T/out"

# The server uses DATABASE_URL too, when --db is not given.
DB_SAVED=$DB; DB=
DATABASE_URL="postgresql:///conduit?host=$PGHOST&port=$PGPORT&user=postgres" conduitd_start -w 1
http GET /api/tags
is "a server configured by DATABASE_URL serves" "$STATUS" 200
DB=$DB_SAVED
stop_pid "$CONDUITD_PID"; CONDUITD_PID=

# A connection string that cannot parse is fatal: no respawn loop, exit 1.
"$CONDUITD" -b 127.0.0.1:0 --dev $( [ "$(id -u)" = 0 ] && echo --allow-root ) \
    --db "host=x =broken" --log "$T/fatal.log" >/dev/null 2>&1 &
pid=$!
wait_for 10 sh -c "! kill -0 $pid 2>/dev/null"
wait "$pid"; rc=$?
is "a master whose workers cannot work exits 1" "$rc" 1
check "saying why" grep -q 'connection string is invalid' "$T/fatal.log"
check "without respawning in a loop" [ "$(grep -c 'started\|exited with status 2' "$T/fatal.log")" -le 4 ]
done_testing
