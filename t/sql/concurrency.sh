#!/bin/sh
# concurrency.sh [DB] [SECONDS] [CLIENTS]: the write statements of
# sql/queries.sql under concurrent load on a t/sql/synth.sh data set
# (default conduit_synth, 30 s, 8 clients), then a check that every counter
# is still exact: conduit_recount() must find nothing to fix.
#
# pgbench runs the queries' own text (-M prepared); the parameters become
# pgbench variables or small SQL expressions ('article-' || :n), which is
# the same statement with the same plan shapes.  Mix, by weight: favorite 25,
# unfavorite 20, follow 8, unfollow 4, comment 20, article insert 10 (base
# slugs from 1,000 titles, so suffixes race; overlapping tag sets), article
# update with a new tag set 5, article delete 2 (not in the workload; with
# it a 40P01 deadlock is possible, see "Lock order" in schema.sql, so
# pgbench retries those up to 3 times and reports them).  Articles and users
# are skewed (zipfian) so hot rows are hit concurrently.  conduit_recount()
# also runs twice during the load.  Connection from the PG* environment.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
db=${1:-conduit_synth}
secs=${2:-30}
clients=${3:-8}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$top/t/sql/prepare-all.sh" -b "$tmp" >/dev/null
Q=$tmp/qtool

hdr='\set n random_zipfian(1, 400000, 1.05)
\set m random(400001, 500000)
\set u random_zipfian(1, 100000, 1.05)
\set t random(1, 1000)'
slug="('article-' || :n)"
gen() { # gen NAME SED...: one script
    name=$1
    shift
    { echo "$hdr"; "$Q" text "$name" | sed "$@"; } >"$tmp/$name.$#.pgb"
    echo "$tmp/$name.$#.pgb"
}
fav=$(gen favorite -e "s/\\\$1::text/$slug::text/g" -e 's/\$2::/:u::/g')
unfav=$(gen unfavorite -e "s/\\\$1::text/$slug::text/g" -e 's/\$2::/:u::/g')
fol=$(gen follow -e "s/\\\$1::text/('user' || :n)::text/g" -e 's/\$2::/:u::/g')
unfol=$(gen unfollow -e "s/\\\$1::text/('user' || :n)::text/g" -e 's/\$2::/:u::/g')
com=$(gen comment_insert -e "s/\\\$1::text/$slug::text/g" -e 's/\$2::/:u::/g' -e "s/\\\$3::text/'a comment'::text/g" \
    -e "s/\\\$4::text/NULL::text/g" -e "s/\\\$5::text/NULL::text/g")
ins=$(gen article_insert -e 's/\$1::/:u::/g' -e "s/\\\$2::text/('title-' || :t)::text/g" \
    -e "s/\\\$3::text/('Title ' || :t)::text/g" -e "s/\\\$4::text/'d'::text/g" -e "s/\\\$5::text/'b'::text/g" \
    -e "s/\\\$6::text/(CASE WHEN :t % 2 = 0 THEN E'tag1\\\\x1ftag3\\\\x1fnew' || :t % 7 ELSE E'tag3\\\\x1ftag2' END)::text/g" \
    -e "s/\\\$7::text/NULL::text/g" -e "s/\\\$8::text/NULL::text/g")
author="(SELECT author_id FROM articles WHERE slug = $slug)"
upd=$(gen article_update -e "s/\\\$1::text/$slug::text/g" -e "s/\\\$2::int8/$author::int8/g" \
    -e "s/\\\$3::text/NULL::text/g" -e "s/\\\$4::text/NULL::text/g" -e "s/\\\$5::text/'new description'::text/g" \
    -e "s/\\\$6::text/NULL::text/g" \
    -e "s/\\\$7::text/(CASE WHEN :t % 2 = 0 THEN E'tag2\\\\x1ftag1' ELSE E'tag1\\\\x1ftag4\\\\x1fnew' || :t % 7 END)::text/g")
dslug="('article-' || :m)"
del=$(gen article_delete -e "s/\\\$1::text/$dslug::text/g" \
    -e "s/\\\$2::int8/(SELECT author_id FROM articles WHERE slug = $dslug)::int8/g")
if grep -l '[$][0-9]' "$tmp"/*.pgb; then
    echo "FAIL: a parameter was left in a pgbench script" >&2
    exit 1
fi

psql -X -q -At -d "$db" -c 'SELECT conduit_recount()' >/dev/null
pgbench -n -M prepared -c "$clients" -j 2 -T "$secs" --max-tries=3 --failures-detailed \
    -f "$fav@25" -f "$unfav@20" -f "$fol@8" -f "$unfol@4" -f "$com@20" -f "$ins@10" \
    -f "$upd@5" -f "$del@2" "$db" >"$tmp/pgbench.log" 2>&1 &
bench=$!
sleep $((secs / 3))
for i in 1 2; do
    t0=$(date +%s%N)
    fixed=$(psql -X -q -At -d "$db" -c 'SELECT conduit_recount()')
    echo "conduit_recount() during the load: $fixed rows fixed, $((($(date +%s%N) - t0) / 1000000)) ms"
done
rc=0
wait "$bench" || rc=$?
grep -E '^(number of|latency average|tps|  - number of)' "$tmp/pgbench.log" || true
grep -E 'SQL script|transactions \(|failed|retried' "$tmp/pgbench.log" | head -n 40
[ "$rc" = 0 ] || { echo "FAIL: pgbench exit $rc" >&2; grep -i 'error' "$tmp/pgbench.log" | head -n 20 >&2; }
fixed=$(psql -X -q -At -d "$db" -c 'SELECT conduit_recount()')
echo "conduit_recount() after the load: $fixed rows fixed (must be 0)"
[ "$rc" = 0 ] && [ "$fixed" = 0 ]
