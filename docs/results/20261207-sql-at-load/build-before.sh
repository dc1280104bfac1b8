#!/bin/sh
# build-before.sh DIR: a conduitd that is this checkout's in every way but
# the feed's statement, which is the one before the SQL work of issue 17
# (sql/queries.sql at 6476fd3, feed-before.sql here; the two columns the
# cache reads, article_id and author_id, added at its end).  A git
# worktree of HEAD in DIR, the statement spliced in, built as
# build-release (script/build).  Prints the binary's path.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
dir=${1:?usage: build-before.sh DIR}
[ -d "$dir" ] || git -C "$top" worktree add -f --detach "$dir" HEAD >/dev/null
cd "$dir"
git checkout -q -- sql/queries.sql
awk -v new="$here/feed-before.sql" '
    /^-- name: / { skip = ($3 == "articles_feed") }
    /^-- name: articles_feed$/ { while ((getline l < new) > 0) print l }
    !skip' sql/queries.sql >sql/queries.sql.new
mv sql/queries.sql.new sql/queries.sql
BUILD_DIR=build-release script/build >&2
echo "$dir/build-release/conduitd"
