#!/bin/sh
# The planner settings the statements are written for (sql/schema.sql:
# plan_cache_mode, jit, random_page_cost) hold in conduitd's sessions even
# on a database that lost them (a CREATE DATABASE ... TEMPLATE copy, a dump
# restored without --create): the pools send them in each session's
# options.  Options the connection string gives come after, so an operator
# can override them.  What a session planned with is read from PostgreSQL's
# own log: auto_explain with log_settings names every planner setting
# that differs from its default, statement by statement.
. "$top_srcdir/t/lib.sh"
command -v jq >/dev/null || skip "jq not installed"

pg_start
# The database forgets the three, and logs every plan with its settings.
psql -X -q -v ON_ERROR_STOP=1 \
    -c 'ALTER DATABASE conduit RESET plan_cache_mode' \
    -c 'ALTER DATABASE conduit RESET jit' \
    -c 'ALTER DATABASE conduit RESET random_page_cost' \
    -c "ALTER DATABASE conduit SET session_preload_libraries = 'auto_explain'" \
    -c 'ALTER DATABASE conduit SET auto_explain.log_min_duration = 0' \
    -c 'ALTER DATABASE conduit SET auto_explain.log_settings = on' ||
    bail "cannot change the database's settings"
is "a plain session of that database plans with the default random_page_cost" \
    "$(psql -X -At -c 'SHOW random_page_cost')" 4
is "and the default plan_cache_mode" "$(psql -X -At -c 'SHOW plan_cache_mode')" auto

# settings_of TEXT: the "Settings:" line of the newest plan logged for a
# statement whose text (over several lines) contains TEXT.
settings_of() {
    awk -v q="$1" '
        /Query Text:/ { text = $0; next }
        /Settings:/ { if (index(text, q)) line = $0; text = ""; next }
        { text = text " " $0 }
        END { sub(/.*Settings: /, "", line); print line }' "$T/pg/log"
}

conduitd_start -w 1 --bcrypt-cost 4 --cache off
http GET /api/tags
is "GET /api/tags answers" "$STATUS" 200
is "conduitd's session planned the tag list with the three settings" \
    "$(settings_of 'FROM tags')" \
    "jit = 'off', plan_cache_mode = 'force_generic_plan', random_page_cost = '1.1'"
stop_pid "$CONDUITD_PID"

# With cache sync on, conduit.cache_notify is added; the settings stay.
conduitd_start -w 1 --bcrypt-cost 4 --cache on
TOKEN=$(register alice)
check "register with the cache on answers a token" test -n "$TOKEN"
is "a write's session (cache on) planned with the three settings" \
    "$(settings_of 'INSERT INTO users')" \
    "jit = 'off', plan_cache_mode = 'force_generic_plan', random_page_cost = '1.1'"
stop_pid "$CONDUITD_PID"

# The operator's options win over conduitd's.
DB="$DB options='-c random_page_cost=2 -c work_mem=8MB'"
conduitd_start -w 1 --bcrypt-cost 4 --cache off
http GET /api/articles
is "GET /api/articles answers" "$STATUS" 200
is "the connection string's options come after conduitd's: random_page_cost 2, work_mem kept" \
    "$(settings_of 'article_count_stripes')" \
    "jit = 'off', plan_cache_mode = 'force_generic_plan', random_page_cost = '2', work_mem = '8MB'"
stop_pid "$CONDUITD_PID"

done_testing
