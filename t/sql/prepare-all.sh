#!/bin/sh
# prepare-all.sh [DB]: generate queries.h/.c from sql/queries.sql with
# sql/gen-queries.awk, compile them (gcc -Wall -Wextra -Werror, so the
# generated C is checked too), and PREPARE every query, exactly as the C
# table holds it, in a fresh database DB (default conduit_prepare) made from
# sql/schema.sql.  Also checks that nparams matches the parameter count
# PostgreSQL infers.  Connection from the PG* environment variables.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
db=${1:-conduit_prepare}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

awk -v out_h="$tmp/queries.h" -v out_c="$tmp/queries.c" \
    -f "$top/sql/gen-queries.awk" "$top/sql/queries.sql"
cat >"$tmp/dump.c" <<'C'
#include <stdio.h>
#include "queries.h"
/* Prints one PREPARE per query, and a check of its parameter count. */
int main(void)
{
    for (int i = 0; i < SQL_QUERY_COUNT; i++) {
        const struct sql_query *q = &sql_queries[i];
        printf("PREPARE %s AS\n%s;\n", q->name, q->text);
        printf("SELECT CASE WHEN coalesce(cardinality(parameter_types), 0) = %d"
               " THEN 'ok %s' ELSE 'NPARAMS MISMATCH %s' END"
               " FROM pg_prepared_statements WHERE name = '%s';\n",
               q->nparams, q->name, q->name, q->name);
    }
    return 0;
}
C
gcc -std=c11 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
    -Wmissing-prototypes -Wformat=2 -Werror \
    -o "$tmp/dump" "$tmp/dump.c" "$tmp/queries.c"
"$tmp/dump" >"$tmp/prepare.sql"

dropdb --if-exists "$db"
createdb "$db"
psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$top/sql/schema.sql"
out=$(psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -f "$tmp/prepare.sql")
echo "$out"
dropdb "$db"
n=$(echo "$out" | grep -c '^ok ' || true)
if echo "$out" | grep -q MISMATCH; then
    echo "FAIL: nparams mismatch" >&2
    exit 1
fi
echo "prepared $n queries"
