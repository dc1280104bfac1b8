#!/bin/sh
# conduitd --init-db applies the embedded schema once, says so the second
# time, upgrades a database of version 2 to version 3 (the feed inbox,
# filled from the data it holds: t/sql/inbox-check.sql finds it exact, and
# the triggers keep it so after) and one of version 1 to version 3 (the
# Idempotency-Key table too) without touching their data, and fails
# cleanly (exit 1, a reason) when it cannot connect.
. "$top_srcdir/t/lib.sh"
PG_NO_SCHEMA=1 pg_start
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
violations() { psql -X -q -At -f "$top_srcdir/t/sql/inbox-check.sql"; }

"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
is "--init-db on an empty database exits 0" "$?" 0
check "and reports the version" grep -q 'schema version 3 applied' "$T/out"
is "the tables exist" "$(psql -X -At -c "select count(*) from information_schema.tables where table_name in ('users','articles','comments','follows','favorites','tags','feed_inbox','feed_readers')")" 8

"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
is "a second --init-db exits 0" "$?" 0
check "and changes nothing" grep -q 'already applied (version 3)' "$T/out"

# What version 3 added, taken away: a database of version 2.
to_v2() {
    sql "DROP TABLE feed_inbox, feed_readers" &&
        sql "DROP FUNCTION conduit_inbox_changes, conduit_inbox_user_delete, conduit_inbox_publish, conduit_inbox_unpublish,
                 conduit_inbox_follow, conduit_inbox_unfollow, conduit_inbox_refill,
                 conduit_inbox_trim, conduit_inbox_rebuild, conduit_inbox_keep,
                 conduit_inbox_slack CASCADE" &&
        sql "DELETE FROM schema_version WHERE version = 3"
}
# Data in it: 60 users, authors 2 to 30 with 0 to 80 articles, readers
# following 0 to 25 of them.
to_v2 || bail "cannot make a version 2 database"
sql "INSERT INTO users (id, username, email, password_hash)
     SELECT i, 'v' || i, 'v' || i || '@x', 'h' FROM generate_series(1, 60) AS i" &&
    sql "INSERT INTO articles (slug, title, description, body, author_id, created_at)
         SELECT 'a' || a || '-' || k, 'T', 'D', 'B', a,
                timestamptz '2026-01-01' + ((a * 37 + k * 11) % 300) * interval '1 hour'
           FROM generate_series(2, 30) AS a, generate_series(1, (a * 13) % 81) AS k" &&
    sql "INSERT INTO follows (follower_id, followee_id)
         SELECT v, e FROM generate_series(1, 60) AS v, generate_series(2, 30) AS e
          WHERE v <> e AND (v * e) % 7 < v % 4" || bail "cannot fill the version 2 database"
"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
is "--init-db on a database of version 2 exits 0" "$?" 0
check "and says it upgraded it" grep -q 'upgraded from version 2 to version 3' "$T/out"
is "every reader has an inbox" "$(sql "SELECT count(*) FROM feed_readers")" \
    "$(sql "SELECT count(DISTINCT follower_id) FROM follows")"
is "filled exactly" "$(violations)" 0
sql "INSERT INTO articles (slug, title, description, body, author_id) VALUES ('new', 'T', 'D', 'B', 2)"
sql "DELETE FROM follows WHERE followee_id = 3"
is "and kept exact by its triggers" "$(violations)" 0
is "schema_version says 3" "$(sql 'SELECT max(version) FROM schema_version')" 3
"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
check "a second --init-db changes nothing" grep -q 'already applied (version 3)' "$T/out"

# A database of version 1: what versions 2 and 3 added taken away.
to_v2 && psql -X -q -v ON_ERROR_STOP=1 -c "DROP FUNCTION conduit_idempotency_answer(bigint, text, text)" \
    -c "DROP TABLE idempotency_keys" -c "DELETE FROM schema_version WHERE version = 2" \
    -c "INSERT INTO users (id, username, email, password_hash) VALUES (1000, 'old', 'old@x', 'h')" ||
    bail "cannot make a version 1 database"
"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
is "--init-db on a database of version 1 exits 0" "$?" 0
check "and says it upgraded it" grep -q 'upgraded from version 1 to version 3' "$T/out"
is "the Idempotency-Key table exists" "$(psql -X -At -c "select to_regclass('idempotency_keys') is not null")" t
is "the inbox is filled exactly" "$(violations)" 0
is "the data is kept" "$(psql -X -At -c "select count(*) from users where username = 'old'")" 1
"$CONDUITD" --init-db --db "$DB" --dev >"$T/out" 2>&1
check "a second --init-db changes nothing" grep -q 'already applied (version 3)' "$T/out"

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
