#!/bin/sh
# One cache per instance, in shared memory, and workers killed in the
# middle of using it (docs/caching.md).  On a seeded database, an
# instance with no cache (the reference) and one with its cache on and 4
# workers:
#   - one cache: the tag list read 40 times on new connections misses
#     once in the whole instance (per-worker caches miss once per worker),
#     and every worker's /healthz reports the same entries (the zone's);
#   - under load (t/cache_kill.py: 6 reader threads on new connections,
#     every read shape as nobody and as two users, a write every 0.7 s)
#     workers are killed for 40 s, one every 2.7 s (the master's crash
#     throttle allows 4 in 10 s): by turns kill -9 at a random moment, and
#     a worker made to die holding a shard's lock with an entry half
#     written in it (/debug/cache-die): every answer the cached instance
#     gives is byte for byte the reference's (a request cut by the kill is
#     counted, not compared);
#   - afterwards the instance has its 4 workers again, answers every read
#     three times exactly with no request failing, and serves from its
#     cache; the dead owners' shards were emptied (conduitd_cache_resets_total,
#     a warning each), never found broken by anyone else, and the kills
#     are counted.
. "$top_srcdir/t/lib.sh"
command -v jq >/dev/null || skip "jq not installed"
has_test_hooks || skip "built without --enable-test-hooks (/debug/cache-die)"
N=4

seeded_reference
# Stale answers off: every answer must be exact, even if the database's
# queue backs up while workers respawn.
conduitd_start -w $N --bcrypt-cost 4 --cache on --cache-stale-max 0 --status-listen 127.0.0.1:0
ON=$BASE
status_base

every_worker() { BASE=$ON each_worker $N "$1"; }
all_enabled() { [ "$(every_worker .cache.enabled | grep -c ' true$')" -eq $N ]; }
wait_for 20 all_enabled || bail "the $N workers' caches did not turn on"

DATA=$(printf '{"tags":%s,"authors":%s,"fans":%s,"slugs":%s,"emails":%s}' \
    "$(json_list "SELECT name FROM tags ORDER BY article_count DESC, name LIMIT 3")" \
    "$(json_list "SELECT username FROM users ORDER BY article_count DESC, id LIMIT 3")" \
    "$(json_list "SELECT username FROM users ORDER BY favorite_count DESC, id LIMIT 2")" \
    "$(json_list "SELECT slug FROM articles ORDER BY id LIMIT 4")" \
    "$(json_list "SELECT u.email FROM users u WHERE EXISTS (SELECT FROM follows f WHERE f.follower_id = u.id) ORDER BY id LIMIT 2")")
note "$DATA"

# ------------------------------------------------------------ one cache
# New connections, 20 at a time, until at least 3 workers have taken some.
for _r in $(seq 1 10); do
    for _i in $(seq 1 20); do
        BASE=$ON http GET /api/tags
        [ "$STATUS" = 200 ] || fail "GET /api/tags: $STATUS"
    done
    every_worker '.cache.lookups.tags // [0,0,0]' >"$T/tags.lookups"
    [ "$(grep -vc ' \[0,0,0\]$' "$T/tags.lookups")" -ge 3 ] && break
done
note "tag list lookups per worker ([hit,stale,absent]): $(tr '\n' ';' <"$T/tags.lookups")"
is "the tag list missed once in the whole instance" \
    "$(awk '{ gsub(/[][]/, "", $2); split($2, r, ","); n += r[3] } END { print n }' "$T/tags.lookups")" 1
check "and was a hit on other workers that never read it ($(awk '$2 !~ /^\[0,/' "$T/tags.lookups" | wc -l) workers hit)" \
    [ "$(awk '$2 !~ /^\[0,/' "$T/tags.lookups" | wc -l)" -ge 2 ]
is "every worker reports the instance's entries" "$(every_worker .cache.entries | awk '{ print $2 }' | sort -u | wc -l)" 1

# ------------------------------------------------------------ kills under load
# die_locked KEY: a worker dies holding the lock of KEY's shard (no answer);
# a 409 is a worker whose cache is not on yet (just respawned): again.
die_locked() {
    _enc=$(printf '%s' "$1" | jq -sRr @uri)
    for _t in $(seq 1 10); do
        _c=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$ON/debug/cache-die?key=$_enc")
        [ "$_c" = 000 ] && return 0
        sleep 0.2
    done
    return 1
}
$PY "$top_srcdir/t/cache_kill.py" "$OFF" "$ON" "$DATA" 40 >"$T/kill.out" 2>&1 &
PYPID=$!
EXTRA_PIDS="$EXTRA_PIDS $PYPID"
KEYS="tags L|10|0 L|10|10 L|20|0 $(printf '%s' "$DATA" | jq -r '.slugs[] | "a:" + .' | tr '\n' ' ')"
kills=0 dies=0 i=0
sleep 2
while alive "$PYPID" && [ $i -lt 14 ]; do
    i=$((i + 1))
    if [ $((i % 2)) = 1 ]; then
        victim=$(worker_pids | shuf -n 1)
        [ -n "$victim" ] && kill -KILL "$victim" && kills=$((kills + 1))
    else
        key=$(echo $KEYS | tr ' ' '\n' | shuf -n 1)
        if die_locked "$key"; then dies=$((dies + 1)); else fail "/debug/cache-die?key=$key answered"; fi
    fi
    sleep 2.7
done
wait "$PYPID"
rc=$?
EXTRA_PIDS=${EXTRA_PIDS% $PYPID}
sed -n '1,40p' "$T/kill.out"
note "$kills workers killed with -9, $dies made to die holding a lock"
is "under kills, every answer of the cached instance is the uncached one's" "$rc" 0
check "the load went on through the kills ($(tail -n 1 "$T/kill.out"))" \
    grep -q '^# [1-9][0-9]* answers compared, 0 differed' "$T/kill.out"

# ------------------------------------------------------------ afterwards
wait_for 20 workers_are $N
is "the master respawned every worker" "$(worker_count)" $N
wait_for 20 all_enabled
check "their caches are on" all_enabled
hits0=$(metric conduitd_cache_hits_total)
$PY "$top_srcdir/t/cache_kill.py" "$OFF" "$ON" "$DATA" 0 final >"$T/final.out" 2>&1
rc=$?
sed -n '1,20p' "$T/final.out"
is "afterwards every read, three times each, is exact and none fails" "$rc" 0
hits1=$(metric conduitd_cache_hits_total)
check "and the cache serves ($hits0 hits before that round, $hits1 after)" [ "$hits1" -gt "$hits0" ]
check "it holds entries ($(metric conduitd_cache_entries) of $(metric conduitd_cache_entries_max), $(metric conduitd_cache_bytes) bytes of $(metric conduitd_cache_capacity_bytes))" \
    [ "$(metric conduitd_cache_entries)" -gt 0 ]
resets=$(metric conduitd_cache_resets_total)
warned=$(grep -c 'died holding the lock of shard' "$T/conduitd.log")
check "the dead owners' shards were emptied ($resets resets, $warned warnings, for $dies deaths holding a lock)" \
    sh -c "[ '$resets' -ge 1 ] && [ '$warned' = '$resets' ]"
is "no shard was ever found broken" "$(grep -c 'found inconsistent' "$T/conduitd.log")" 0
check "the deaths are counted ($(metric 'conduitd_worker_exits_total{cause="signal"}') by signal)" \
    [ "$(metric 'conduitd_worker_exits_total{cause="signal"}')" -ge $((kills + dies)) ]

done_testing
