#!/bin/sh
# -w 3 gives three workers, each with its title, all serving /healthz; the
# master has its own title; -w auto gives one per online core.
. "$top_srcdir/t/lib.sh"

conduitd_start -w 3
wait_for 5 workers_are 3
is "-w 3 forks three workers" "$(worker_count)" 3
is "the master's title" "$(tr '\0' ' ' </proc/$CONDUITD_PID/cmdline | sed 's/ *$//')" "conduitd: master"

# Every worker index answers, sooner or later, on fresh connections.  Which
# worker accepts is the kernel's choice, and on a loaded machine one can
# miss a few hundred in a row: ask until all three have answered (20 s).
seen=
all_seen() {
    for w in 0 1 2; do echo "$seen" | grep -qw $w || return 1; done
}
deadline=$(($(date +%s) + 20))
while [ "$(date +%s)" -lt "$deadline" ] && ! all_seen; do
    for i in $(seq 1 20); do
        seen="$seen $(healthz_worker)"
    done
done
for w in 0 1 2; do
    check "worker $w answers /healthz" sh -c "echo '$seen' | grep -qw $w"
done
body=$(curl -s "$BASE/healthz")
check "/healthz says ok with a pid" sh -c "echo '$body' | jq -e '.status == \"ok\" and (.pid | type) == \"number\"' >/dev/null"
ctype=$(curl -s -o /dev/null -w '%{content_type}' "$BASE/healthz")
is "/healthz is JSON" "$ctype" "application/json; charset=utf-8"
http GET /no/such/path
is "unknown path gives 404" "$STATUS" 404
check "404 has the error envelope" sh -c "echo '$BODY' | jq -e '.errors.body[0]' >/dev/null"
http POST /healthz
is "wrong method gives 405" "$STATUS" 405
stop_pid "$CONDUITD_PID"; CONDUITD_PID=

conduitd_start -w auto
cores=$(getconf _NPROCESSORS_ONLN)
wait_for 5 workers_are $cores
is "-w auto forks one worker per online core" "$(worker_count)" "$cores"
done_testing
