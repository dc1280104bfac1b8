#!/bin/sh
# feed.sh PAGES_CONDUITD MERGED_CONDUITD: the cache with per-viewer feed
# pages (a build of 889d1b7) against the feed merged from per-author
# entries (a build of a19cf6f, reverted after this measurement), both
# --cache on, interleaved, twice, at USERS users (default 8000); reports
# into feed/.  The merged build needs its trigger on the database too
# (conduit_cache_articles of a19cf6f's sql/schema.sql).
here=$(cd "$(dirname "$0")" && pwd)
USERS=${USERS:-8000}
export OUT=docs/results/20261206-cache-pages/feed
mkdir -p "$here/feed"
for r in 1 2; do
    CONDUITD=$1 "$here/one.sh" "pages-$r" on "$USERS"
    CONDUITD=$2 "$here/one.sh" "merged-$r" on "$USERS"
done
