#!/bin/sh
# Instances that share a database with different cache settings: one with
# the cache on (A) cannot see the writes of one with it off (B), whose
# sessions send no cache notifications, and serves what B changes stale.
# The manual says not to do it; now A says so too: each of B's workers
# announces itself every 5 s on the channel A listens to, and every worker
# of A logs an error naming B (host and master pid) and shows it in
# /healthz ("cache":{"mismatch":...}).  The control: A beside a second
# cached instance (C) for longer than an announcement period hears nothing.
# Before: B's change to a bio was still stale on A after 10 s, and nothing
# was logged or shown.
. "$top_srcdir/t/lib.sh"

pg_start
conduitd_start -w 2 --bcrypt-cost 4 --cache on
A_PID=$CONDUITD_PID A_BASE=$BASE
mv "$T/conduitd.log" "$T/a.log"
EXTRA_PIDS=$A_PID
CONDUITD_PID=
conduitd_start -w 1 --bcrypt-cost 4 --cache on
C_PID=$CONDUITD_PID
mv "$T/conduitd.log" "$T/c.log"
EXTRA_PIDS="$C_PID $A_PID"
CONDUITD_PID=

BASE=$A_BASE
http POST /api/users '{"user":{"username":"bea","email":"bea@example.com","password":"password1"}}'
is "register on A" "$STATUS" 201
TOK=$(printf '%s' "$BODY" | jq -r .user.token)
# The control: two cached instances, for more than one announcement period.
sleep 6
is "cached instances together: A hears no mismatch" "$(grep -c 'without cache notifications' "$T/a.log")" 0
is "nor does C" "$(grep -c 'without cache notifications' "$T/c.log")" 0
http GET /healthz
is "A's /healthz shows no mismatch" "$(printf '%s' "$BODY" | jq -c '.cache.mismatch')" null

# B, cache off, on the same database.
stop_pid "$C_PID"
EXTRA_PIDS=$A_PID
conduitd_start -w 1 --bcrypt-cost 4 --cache off
B_PID=$CONDUITD_PID B_BASE=$BASE

# A caches bea's profile; B changes her bio, silently for A.
BASE=$A_BASE
for i in 1 2 3 4; do http GET /api/profiles/bea; done
BASE=$B_BASE
http PUT /api/user '{"user":{"bio":"changed through B"}}' "$TOK"
is "a write through B" "$STATUS" 200
BASE=$A_BASE
t0=$(ms_now)
heard() { [ "$(grep -c "instance .* pid $B_PID writes to this database without cache notifications" "$T/a.log")" -ge 2 ]; }
wait_for 12 heard
ms=$(($(ms_now) - t0))
check "both of A's workers log an error naming B (host, pid $B_PID) within 12 s ($ms ms)" heard
seen=0
for i in 1 2 3 4 5 6 7 8; do
    http GET /healthz
    w=$(printf '%s' "$BODY" | jq -r '.cache.mismatch.writer // empty')
    case $w in *" pid $B_PID") seen=$((seen + 1)) ;; *) note "healthz without the mismatch: $(short "$BODY" 300)" ;; esac
done
is "A's /healthz names B on every answer (8 on new connections, any worker)" "$seen" 8
http GET /api/profiles/bea
note "A's answer for bea's bio now: $(printf '%s' "$BODY" | jq -r .profile.bio) (the stale value the error warns of, unless evicted)"
BASE=$B_BASE
http GET /healthz
is "B (cache off) shows no cache section" "$(printf '%s' "$BODY" | jq -c '.cache')" null
is "B's own log is quiet about it" "$(grep -c 'without cache notifications' "$T/conduitd.log")" 0
done_testing
