#!/bin/sh
# Slow readers (slowhttptest -X): a client that asks for a large reply and
# then takes it at 1 kB/s is cut once no write has made progress for
# send_timeout (2 s here): the worker resets the connection, with what it
# had not written yet dropped, while other clients are served.  A client
# that reads slowly but steadily is not cut, though its reply takes longer
# than send_timeout in all: the timeout runs between two writes, as nginx's.
. "$top_srcdir/t/lib.sh"

pg_start
LOG_LEVEL=debug conduitd_start -w 1 --send-timeout 2 --max-body-size 16777216 --bcrypt-cost 4
strict_setup
# A 12 MB article: more than the socket buffers of both ends hold on loopback.
head -c 12000000 /dev/zero | tr '\0' a |
    sed 's/^/{"article":{"title":"Big","description":"d","body":"/; s/$/"}}/' >"$T/big.json"
curl -s -o "$T/created" -w '%{http_code}' -H "Authorization: Token $STRICT_TOKEN" \
    -H 'Content-Type: application/json' --data-binary @"$T/big.json" "$BASE/api/articles" >"$T/code"
is "a 12 MB article is written" "$(cat "$T/code")" 201
path=/api/articles/$(jq -r .article.slug "$T/created")
big=$BASE$path
size=$(curl -s -o /dev/null -w '%{size_download}' "$big")
note "its reply: $size bytes"
check "its reply is over 12 MB" [ "$size" -gt 12000000 ]

# The slow reader, and clients asking meanwhile.
cuts() { grep -c 'of its reply unsent' "$T/conduitd.log"; }
# The cut's time is measured alone (t/lib.sh), not beside the rest of the suite.
exclusive
t0=$(ms_now)
curl -s -o /dev/null --limit-rate 1000 --max-time 30 "$big" &
slow=$!
load_start others -c 4 -r 200 -d 5 -u /healthz -t 5000
check "the slow reader is cut" wait_for 10 sh -c "[ \$(grep -c 'of its reply unsent' '$T/conduitd.log') -ge 1 ]"
line=$(grep 'of its reply unsent' "$T/conduitd.log" | head -n 1)
note "$line"
t_cut=$(date -d "${line%% *}" +%s%3N 2>/dev/null) || t_cut=$((t0 + 999999))
note "cut $((t_cut - t0)) ms after its request (send_timeout 2 s)"
check "not before send_timeout (2 s)" [ $((t_cut - t0)) -ge 2000 ]
check "soon after it" [ $((t_cut - t0)) -lt 6000 ]
check "with megabytes unwritten" sh -c "echo '$line' | awk '{ for (i = 1; i < NF; i++) if (\$(i + 1) == \"byte(s)\") exit !(\$i > 1000000); exit 1 }'"
kill "$slow" 2>/dev/null
wait "$slow" 2>/dev/null
load_wait others
is "the other clients: 0 failed meanwhile" "$L_failed" 0
is "every one answered 200" "$L_s2xx" "$L_requests"

# A steady reader (loadgen -R: a small receive buffer, read at an even
# 2 MB/s) takes about 6 s for its reply, longer than send_timeout, and
# gets all of it: the timeout runs between two writes.
before=$(cuts)
load_start steady -c 1 -n 1 -d 1 -R 2000000 -u "$path" -t 30000
load_wait steady
note "a steady reader at 2 MB/s: $L_s2xx of 1 answered 200, in $L_max_ms ms"
is "a slow but steady reader gets the whole reply" "$L_s2xx" 1
check "in more than send_timeout ($L_max_ms ms)" fcmp "$L_max_ms" ">" 2000
is "and is not cut" "$(cuts)" "$before"
done_testing
