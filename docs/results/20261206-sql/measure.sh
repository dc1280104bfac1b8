#!/bin/sh
# measure.sh BEFORE AFTER CASES [REPS] [ROUNDS]: the statements of
# sql/queries.sql at two git revisions, side by side, on the database the
# PG* variables name (a copy of the scale-1 dataset with
# pg_stat_statements; the database is only read).
#
# CASES has one case a line, "statement|parameters", for example
#     articles_feed|4242, 10, 0
# Each repetition is one psql session: it prepares every statement of both
# revisions (as <name>_before and <name>_after, planned generically as the
# server's connections plan them), runs every round once unmeasured (the
# first touch of a case's pages, from the OS cache into shared buffers,
# went to whichever revision ran first: an A/A run, both revisions the
# same, had the first one 14 to 65 % slower), resets this database's
# pg_stat_statements entries, then runs ROUNDS rounds (an even number)
# over the cases, each case once per revision, the revision that goes
# first alternating from round to round.  pg_stat_statements keys a
# statement by its text, not its name: a statement the two revisions
# share shows once, as _before, with the calls of both.  It prints, per statement and revision, the calls, the
# mean execution time (ms) and the shared buffers (hit + read) per call
# from pg_stat_statements; after REPS repetitions, the median of the
# repetitions' means.  Then the same rounds once more under EXPLAIN
# (ANALYZE, TIMING OFF), REPS times, for the median and the 90th
# percentile of every single execution: on a shared machine a mean takes
# every burst of someone else's work, a median much less.
set -eu
before=$1 after=$2 cases=$3 reps=${4:-5} rounds=${5:-5}
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for side in before after; do
    eval "rev=\$$side"
    mkdir -p "$tmp/$side"
    git -C "$top" archive "$rev" sql t/sql | tar -x -C "$tmp/$side"
    sh "$tmp/$side/t/sql/prepare-all.sh" -b "$tmp/$side/q" >/dev/null
    sed "s/^PREPARE \([a-z_]*\) AS$/PREPARE \1_$side AS/" "$tmp/$side/q/prepare.sql" >"$tmp/$side.sql"
done

awk -F'|' -v rounds="$rounds" '
    { s[NR] = $1; a[NR] = $2 }
    END {
        for (r = 0; r < rounds; r++)
            for (i = 1; i <= NR; i++) {
                x = r % 2 ? "after" : "before"; y = r % 2 ? "before" : "after"
                printf "EXECUTE %s_%s(%s);\nEXECUTE %s_%s(%s);\n", s[i], x, a[i], s[i], y, a[i]
            }
    }' "$cases" >"$tmp/run.sql"
sed 's/^EXECUTE \([a-z_]*\)(/\\echo @ \1\
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, SUMMARY ON) EXECUTE \1(/' "$tmp/run.sql" >"$tmp/explain.sql"

rep=1
: >"$tmp/all"
while [ "$rep" -le "$reps" ]; do
    {
        cat "$tmp/before.sql" "$tmp/after.sql"
        echo '\o /dev/null'
        cat "$tmp/run.sql"
        echo '\o'
        echo "SELECT pg_stat_statements_reset(0::oid,
              (SELECT oid FROM pg_database WHERE datname = current_database()), 0::bigint);"
        echo '\o /dev/null'
        cat "$tmp/run.sql"
        echo '\o'
    } | psql -X -q -v ON_ERROR_STOP=1 >/dev/null
    psql -X -At -F' ' -c "
        SELECT substring(query FROM '^PREPARE ([a-z_]+) AS'), calls,
               round(mean_exec_time::numeric, 4),
               round((shared_blks_hit + shared_blks_read)::numeric / calls, 1)
          FROM pg_stat_statements
         WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND query ~ '^PREPARE [a-z_]+_(before|after) AS'
         ORDER BY 1" | sed "s/^/rep $rep /" | tee -a "$tmp/all"
    rep=$((rep + 1))
done
echo "median of $reps repetitions (statement, calls per repetition, mean ms, buffers per call):"
sort -k3,3 -k5,5n "$tmp/all" | awk '
    function flush() { if (n) printf "%-34s %6d %8.4f %8.1f\n", k, c, v[int((n + 1) / 2)], b }
    $3 != k { flush(); k = $3; n = 0 }
    { v[++n] = $5; c = $4; b = $6 }
    END { flush() }'

rep=1
: >"$tmp/times"
while [ "$rep" -le "$reps" ]; do
    { cat "$tmp/before.sql" "$tmp/after.sql"; echo '\o /dev/null'; cat "$tmp/run.sql"
      echo '\o'; cat "$tmp/explain.sql"; } |
        psql -X -q -At -v ON_ERROR_STOP=1 |
        awk '/^@ / { k = $2 } /^Execution Time:/ { print k, $3 }' >>"$tmp/times"
    rep=$((rep + 1))
done
echo "single executions under EXPLAIN (ANALYZE, TIMING OFF) (statement, executions, median ms, p90 ms, mean ms):"
sort -k1,1 -k2,2n "$tmp/times" | awk '
    function flush() {
        if (n) printf "%-34s %6d %8.4f %8.4f %8.4f\n", k, n, v[int((n + 1) / 2)], v[int(n * 0.9 + 0.5)], t / n
    }
    $1 != k { flush(); k = $1; n = 0; t = 0 }
    { v[++n] = $2; t += $2 }
    END { flush() }'
