#!/bin/sh
# HUP with a changed worker count changes it, and no request made during
# the reload fails.  A broken config on HUP is logged and the old one kept.
. "$top_srcdir/t/lib.sh"

cat >"$T/conduitd.conf" <<CONF
workers = 2
CONF
conduitd_start -c "$T/conduitd.conf"
wait_for 5 sh -c "[ \$(cat /proc/$CONDUITD_PID/task/*/children | wc -w) -eq 2 ]"
is "starts with the file's 2 workers" "$(worker_count)" 2
old=$(worker_pids | sort | tr '\n' ' ')

( fails=0; n=0
  while [ ! -f "$T/stop" ]; do
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/healthz")
      n=$((n + 1)); [ "$code" = 200 ] || { fails=$((fails + 1)); echo "status $code" >>"$T/failures"; }
  done; echo "$n $fails" >"$T/loop" ) &
loop=$!
sleep 0.3
echo "workers = 3" >"$T/conduitd.conf"
kill -HUP "$CONDUITD_PID"
wait_for 10 grep -q 'reload complete' "$T/conduitd.log"
check "the reload completes" grep -q 'reload complete: generation 2, 3 worker' "$T/conduitd.log"
old_gone() { for p in $old; do alive "$p" && return 1; done; return 0; }
wait_for 10 old_gone
check "the old workers are retired" old_gone
is "now 3 workers" "$(worker_count)" 3
sleep 0.3
touch "$T/stop"; wait "$loop"
read n fails <"$T/loop"
note "$n requests across the reload, $fails failed"
is "no request failed during the reload" "$fails" 0
check "requests were made during the reload" [ "$n" -gt 10 ]

# A broken file: logged, the running config kept, workers untouched.
before=$(worker_pids | sort | tr '\n' ' ')
printf 'workers = 3\nno_such_key = 1\n' >"$T/conduitd.conf"
kill -HUP "$CONDUITD_PID"
wait_for 5 grep -q 'reload failed' "$T/conduitd.log"
check "a bad config is reported with its line" grep -q "reload failed: .*conduitd.conf:2:" "$T/conduitd.log"
sleep 0.5
is "the workers keep running" "$(worker_pids | sort | tr '\n' ' ')" "$before"
is "still serving" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz")" 200
done_testing
