#!/bin/sh
# 40 HUPs 0.2 s apart under load: the reloads never overlap, so the
# database connections never exceed two generations' worth, 2 workers x
# (pool 4 + 1 cache listener) x 2 = 20, counted in pg_stat_activity every
# 50 ms; no request fails; the HUPs that came while a reload was under way
# were one reload, of the last file.  Before: each HUP started a generation
# beside the others still starting or draining, and one instance reached
# 199 of PostgreSQL's 200 connections ("too many clients").
. "$top_srcdir/t/lib.sh"
has_loadgen || skip "t/loadgen is not built"

BOUND=20
pg_start
cat >"$T/conduitd.conf" <<CONF
workers = 2
CONF
conduitd_start -c "$T/conduitd.conf" --pool 4 --cache on --bcrypt-cost 4

# backends: conduitd's connections now (its pools are "conduitd", the
# cache listener "conduitd cache").
backends() {
    psql -X -A -t -c "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'conduitd%'"
}
# Samples until $T/sampling is removed; the largest count goes to $T/max.
sampler() {
    _max=0
    while [ -f "$T/sampling" ]; do
        _n=$(backends 2>/dev/null || echo 0)
        [ "${_n:-0}" -gt "$_max" ] && _max=$_n && echo "$_max" >"$T/max"
        sleep 0.05
    done
}
backends_are() { [ "$(backends)" -eq "$1" ]; }
wait_for 5 backends_are 10
is "at rest: 2 x (4 + 1) connections" "$(backends)" 10

: >"$T/sampling"
echo 0 >"$T/max"
sampler &
sampler_pid=$!
load_start storm -c 6 -r 400 -d 12 -u /api/tags -t 5000
storm_pid=$LOAD_PID
load_start stormkeep -k -c 4 -r 300 -d 12 -u /api/articles -t 5000
keep_pid=$LOAD_PID
sleep 0.5
for i in $(seq 40); do
    echo "workers = 2 # $i" >"$T/conduitd.conf"
    last_hup=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
    kill -HUP "$CONDUITD_PID"
    sleep 0.2
done
load_wait storm "$storm_pid"
is "0 failed requests on new connections across 40 HUPs" "$L_failed" 0
is "every one answered 200" "$L_s2xx" "$L_requests"
load_wait stormkeep "$keep_pid"
is "0 failed requests on kept-alive connections" "$L_failed" 0
is "every kept-alive one answered 200" "$L_s2xx" "$L_requests"
# The last HUP's reload, and the drain of the generation it replaced.
wait_for 30 backends_are 10
sleep 1
rm -f "$T/sampling"
wait "$sampler_pid"
max=$(cat "$T/max")
reloads=$(grep -c 'reload complete' "$T/conduitd.log")
deferred=$(grep -c 'reload deferred' "$T/conduitd.log")
note "40 HUPs 0.2 s apart: $reloads reloads, $deferred HUP(s) deferred, at most $max connections (bound $BOUND)"
check "never more than two generations' connections ($max <= $BOUND)" [ "$max" -le "$BOUND" ]
check "some reloads ran ($reloads)" [ "$reloads" -ge 3 ]
check "HUPs during a reload were deferred" [ "$deferred" -ge 1 ]
last_reload=$(grep 'reloading the configuration' "$T/conduitd.log" | tail -n 1 | cut -d ' ' -f 1)
check "a reload began after the last HUP, so read the last file ($last_reload >= $last_hup)" \
    [ "$(printf '%s\n%s\n' "$last_hup" "$last_reload" | sort | tail -n 1)" = "$last_reload" ]
is "back to 2 x (4 + 1) connections" "$(backends)" 10
is "2 workers serve" "$(worker_count)" 2
is "no failed reload" "$(grep -c 'reload failed\|reload refused' "$T/conduitd.log")" 0
done_testing
