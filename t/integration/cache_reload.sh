#!/bin/sh
# The instance's cache across reloads (docs/caching.md): its memory is
# mapped by the master at the start, so
#   - a reload (HUP) that changes cache_memory or cache_size goes on, logs
#     that they take a restart, and the cache keeps its size (/metrics:
#     conduitd_cache_capacity_bytes, conduitd_cache_entries_max);
#   - a reload that turns the cache on from off works (the memory was
#     mapped all the same), and the new workers share one cache: the tag
#     list read 40 times on new connections misses once.
. "$top_srcdir/t/lib.sh"
command -v jq >/dev/null || skip "jq not installed"

pg_start
printf 'cache = off\ncache_memory = 16\ncache_size = 5000\n' >"$T/c.conf"
conduitd_start -c "$T/c.conf" -w 2 --bcrypt-cost 4 --status-listen 127.0.0.1:0
status_base
is "cache off: the cache's memory is mapped all the same, 16 MB" \
    "$(metric conduitd_cache_capacity_bytes)" $((16 << 20))
is "for 5000 entries" "$(metric conduitd_cache_entries_max)" 5000
http GET /healthz
is "cache off: /healthz has no cache" "$(printf '%s' "$BODY" | jq -c .cache)" null

printf 'cache = on\ncache_memory = 32\ncache_size = 9000\n' >"$T/c.conf"
kill -HUP "$CONDUITD_PID"
wait_for 20 grep -q 'reload complete' "$T/conduitd.log"
check "the reload completes" grep -q 'reload complete' "$T/conduitd.log"
check "and says the sizes take a restart" \
    grep -q 'reload: cache_size, cache_memory cannot change without a restart' "$T/conduitd.log"
is "the cache keeps its 16 MB" "$(metric conduitd_cache_capacity_bytes)" $((16 << 20))
is "and its 5000 entries" "$(metric conduitd_cache_entries_max)" 5000
enabled() { [ "$(each_worker 2 .cache.enabled | grep -c ' true$')" -eq 2 ]; }
wait_for 20 enabled
check "the new workers' caches are on" enabled
http GET /healthz
is "/healthz reports the kept size" "$(printf '%s' "$BODY" | jq -c '[.cache.capacity, .cache.max_entries]')" \
    "[$((16 << 20)),5000]"
for _i in $(seq 1 40); do
    http GET /api/tags
    [ "$STATUS" = 200 ] || fail "GET /api/tags: $STATUS"
done
is "40 reads of the tag list on new connections: one miss in the instance" \
    "$(metric 'conduitd_cache_lookups_total{kind="tags",result="absent"}')" 1
is "the others hits" "$(metric 'conduitd_cache_lookups_total{kind="tags",result="hit"}')" 39

done_testing
