#!/bin/sh
# bench.sh [DB] [MODE] [CASE...]: times the queries of sql/queries.sql on a
# data set made by t/sql/synth.sh (default database conduit_synth).
#
# Each case runs the prepared statement, exactly as the server sends it,
# RUNS times (default 15) under EXPLAIN (ANALYZE, TIMING OFF) and prints
# the median and the maximum "Execution Time" in ms.  Writes run inside a
# transaction that is rolled back.  MODE is the plan_cache_mode: auto
# (default: PostgreSQL picks custom or generic plans, as it does for the
# server's long-lived connections), force_custom_plan or
# force_generic_plan.  With PLANS=1 it also prints the full plan (with
# timing and buffers) of the last run of each case.  CASE names a subset
# (see the list below).  Connection from the PG* environment variables.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
db=${1:-conduit_synth}
mode=${2:-auto}
[ $# -ge 2 ] && shift 2 || shift $#
runs=${RUNS:-15}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$top/t/sql/prepare-all.sh" -b "$tmp" >/dev/null

# name~statement~write (1: roll back).  Users with low ids are the heavy
# ones in synth.sh: user1 wrote ~10k articles, favorited ~16k, follows
# ~1k users; tag1 is on ~80k articles; article-1 has ~13k comments.
cat >"$tmp/cases" <<'CASES'
list_global~articles_list(NULL, NULL, NULL, 10, 0, 4242, 4242)~0
list_global_viewer1~articles_list(NULL, NULL, NULL, 10, 0, 1, 1)~0
list_global_anon~articles_list(NULL, NULL, NULL, 10, 0, NULL, NULL)~0
list_global_off200~articles_list(NULL, NULL, NULL, 10, 200, 4242, 4242)~0
list_global_lim100~articles_list(NULL, NULL, NULL, 100, 0, 4242, 4242)~0
list_tag_popular~articles_list_tag('tag1', NULL, NULL, 10, 0, 4242, 4242)~0
list_tag_popular_off200~articles_list_tag('tag1', NULL, NULL, 10, 200, 4242, 4242)~0
list_tag_rare~articles_list_tag('tag200', NULL, NULL, 10, 0, 4242, 4242)~0
list_tag_unknown~articles_list_tag('nosuchtag', NULL, NULL, 10, 0, 4242, 4242)~0
list_author_prolific~articles_list_author(NULL, 'user1', NULL, 10, 0, 4242, 4242)~0
list_author_typical~articles_list_author(NULL, 'user5000', NULL, 10, 0, 4242, 4242)~0
list_fav_heavy~articles_list_favorited(NULL, NULL, 'user1', 10, 0, 4242, 4242)~0
list_fav_heavy_off200~articles_list_favorited(NULL, NULL, 'user1', 10, 200, 4242, 4242)~0
list_fav_typical~articles_list_favorited(NULL, NULL, 'user50000', 10, 0, 4242, 4242)~0
list_tag_author~articles_list_filtered('tag1', 'user1', NULL, 10, 0, 4242, 4242)~0
list_tag_author_typical~articles_list_filtered('tag1', 'user5000', NULL, 10, 0, 4242, 4242)~0
list_tag_fav~articles_list_filtered('tag1', NULL, 'user1', 10, 0, 4242, 4242)~0
feed_heavy~articles_feed(1, 10, 0, 1)~0
feed_heavy_off200~articles_feed(1, 10, 200, 1)~0
feed_typical~articles_feed(50000, 10, 0, 50000)~0
feed_p99~articles_feed(300, 10, 0, 300)~0
article_get_hot~article_get('article-1', 4242, 4242)~0
article_get~article_get('article-250000', 4242, 4242)~0
comments_hot~comments_list('article-1', 4242, 4242)~0
comments~comments_list('article-250000', 4242, 4242)~0
profile~profile_get('user1', 4242)~0
tags~tags_list~0
login~user_by_email('USER4242@example.com')~0
user_by_id~user_by_id(4242)~0
favorite_hot~favorite('article-1', 4242)~1
unfavorite_hot~unfavorite('article-2', 1)~1
follow~follow('user1', 4242)~1
comment_insert~comment_insert('article-1', 4242, 'a comment', NULL, NULL)~1
article_insert~article_insert(4242, 'article-1', 'Article 1', 'd', 'b', 'tag1' || E'\x1f' || 'tag2' || E'\x1f' || 'newtag', NULL, NULL)~1
article_update~article_update('article-7', (SELECT author_id FROM articles WHERE slug = 'article-7'), 'a-new-title', 'A new title', NULL, NULL, 'tag1' || E'\x1f' || 'tag3')~1
article_delete~article_delete('article-400000', (SELECT author_id FROM articles WHERE slug = 'article-400000'))~1
article_delete_hot~article_delete('article-1', (SELECT author_id FROM articles WHERE slug = 'article-1'))~1
CASES

# EXECUTE takes only constants, so the parameters that need a lookup go
# through \gset first.
for c in $(cut -d'~' -f1 "$tmp/cases"); do
    if [ $# -gt 0 ]; then
        case " $* " in *" $c "*) ;; *) continue ;; esac
    fi
    stmt=$(grep "^$c~" "$tmp/cases" | cut -d'~' -f2)
    write=$(grep "^$c~" "$tmp/cases" | cut -d'~' -f3)
    {
        cat "$tmp/prepare.sql"
        [ "$mode" = auto ] || echo "SET plan_cache_mode = $mode;"
        case $stmt in
        *"(SELECT "*)
            sub=$(echo "$stmt" | sed 's/.*(\(SELECT [^)]*\)).*/\1/')
            printf '%s \\gset v_\n' "$sub"
            stmt=$(echo "$stmt" | sed 's/(SELECT [^)]*)/:v_author_id/')
            ;;
        esac
        i=0
        while [ $i -lt "$runs" ]; do
            [ "$write" = 1 ] && echo "BEGIN;"
            echo "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, SUMMARY ON) EXECUTE $stmt;"
            [ "$write" = 1 ] && echo "ROLLBACK;"
            i=$((i + 1))
        done
        if [ "${PLANS:-}" = 1 ]; then
            [ "$write" = 1 ] && echo "BEGIN;"
            printf '\\echo ---- plan of %s\n' "$c"
            echo "EXPLAIN (ANALYZE, BUFFERS) EXECUTE $stmt;"
            [ "$write" = 1 ] && echo "ROLLBACK;"
        fi
    } >"$tmp/run.sql"
    psql -X -q -At -v ON_ERROR_STOP=1 -d "$db" -f "$tmp/run.sql" >"$tmp/out"
    # Planning Time is the time to build a custom plan (near 0 when the
    # cached generic plan is used); Execution Time the run itself.
    plan=$(sed -n 's/^Planning Time: \([0-9.]*\) ms$/\1/p' "$tmp/out" | head -n "$runs" |
        sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }')
    sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' "$tmp/out" | head -n "$runs" |
        sort -n | awk -v c="$c" -v p="$plan" '{ v[NR] = $1 } END {
            printf "%-26s median %8.3f ms   max %8.3f ms   (planning median %s ms)\n",
                c, v[int((NR + 1) / 2)], v[NR], p }'
    [ "${PLANS:-}" = 1 ] && sed -n '/^---- plan of/,$p' "$tmp/out"
done
