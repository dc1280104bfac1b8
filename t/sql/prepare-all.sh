#!/bin/sh
# prepare-all.sh [-b DIR] [DB]
#
# Generates queries.h/.c from sql/queries.sql with sql/gen-queries.awk,
# compiles them with t/sql/qtool.c (-Wall -Wextra -Wpedantic -Werror, so the
# generated C is checked too: an over-long string literal, a bad escape),
# then, in a fresh database DB (default conduit_prepare) made from
# sql/schema.sql, prepares every query with PQprepare exactly as the server
# does and compares what the server infers (parameter types, result columns
# and their types) with t/sql/contract.txt.  Exit 0 only when every query
# prepares, nparams matches, and the contract holds.
#
# -b DIR: only build, into DIR (queries.h, queries.c, qtool, prepare.sql
# with one PREPARE per query for psql); no database is touched.  The
# integration test t/integration/sql.sh uses this.
#
# Connection from the PG* environment variables.  CC defaults to cc.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build_only=
if [ "${1:-}" = -b ]; then
    build_only=$2
    shift 2
fi
db=${1:-conduit_prepare}

if [ -n "$build_only" ]; then
    out=$build_only
    mkdir -p "$out"
else
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi

awk -v out_h="$out/queries.h" -v out_c="$out/queries.c" -f "$top/sql/c-string.awk" \
    -f "$top/sql/gen-queries.awk" "$top/sql/queries.sql"
pq_cflags=$(pkg-config --cflags libpq 2>/dev/null || echo "-I$(pg_config --includedir)")
pq_libs=$(pkg-config --libs libpq 2>/dev/null || echo "-L$(pg_config --libdir) -lpq")
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
    -Wmissing-prototypes -Wformat=2 -Werror $pq_cflags -I"$out" \
    -o "$out/qtool" "$top/t/sql/qtool.c" "$out/queries.c" $pq_libs
"$out/qtool" sql >"$out/prepare.sql"
[ -n "$build_only" ] && exit 0

dropdb --if-exists "$db"
createdb "$db"
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$top/sql/schema.sql"
rc=0
PGDATABASE=$db "$out/qtool" describe >"$out/describe.txt" || rc=1
dropdb "$db"
cat "$out/describe.txt"
if ! grep -v '^#' "$top/t/sql/contract.txt" | diff -u - "$out/describe.txt" >"$out/diff"; then
    echo "FAIL: the result contract differs from t/sql/contract.txt:" >&2
    cat "$out/diff" >&2
    rc=1
fi
[ "$rc" = 0 ] || exit 1
echo "prepared $(wc -l <"$out/describe.txt" | tr -d ' ') queries; contract holds"
