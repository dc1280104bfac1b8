#!/bin/sh
# The daemon's own security: workers drop to --user after the master has
# bound the socket (and cannot get root back), the master alone keeps root
# (it must bind again on a reload); a reload with a world-readable secret
# file is refused and the running config kept; the systemd unit carries
# the usual hardening options.
. "$top_srcdir/t/lib.sh"

# ---------------------------------------------------------------- --user
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    nobody_uid=$(id -u nobody)
    nobody_gid=$(id -g nobody)
    printf 'workers = 2\n' >"$T/conduitd.conf"
    chmod 600 "$T/conduitd.conf"
    conduitd_start -c "$T/conduitd.conf" --user nobody
    for w in $(worker_pids); do
        is "worker $w: real, effective, saved uid are nobody's" \
            "$(awk '/^Uid:/ { print $2, $3, $4 }' /proc/"$w"/status)" "$nobody_uid $nobody_uid $nobody_uid"
        is "worker $w: gids are nobody's" \
            "$(awk '/^Gid:/ { print $2, $3, $4 }' /proc/"$w"/status)" "$nobody_gid $nobody_gid $nobody_gid"
        is "worker $w: no supplementary group but nobody's" \
            "$(awk '/^Groups:/ { $1 = ""; print $0 }' /proc/"$w"/status | tr -d ' ')" "$nobody_gid"
        is "worker $w: no capability left" "$(awk '/^CapEff:/ { print $2 }' /proc/"$w"/status)" 0000000000000000
    done
    is "the master stays root (it binds on reload)" "$(awk '/^Uid:/ { print $3 }' /proc/"$CONDUITD_PID"/status)" 0
    is "the workers serve" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz")" 200
    check "the log belongs to the workers' user (they reopen it)" [ "$(stat -c %u "$T/conduitd.log")" = "$nobody_uid" ]

    # A reload that brings the secret in a world-readable file: refused.
    printf 'workers = 2\njwt_secret = a-secret-of-at-least-thirty-two-bytes-xyz\n' >"$T/conduitd.conf"
    chmod 644 "$T/conduitd.conf"
    before=$(worker_pids | sort | tr '\n' ' ')
    kill -HUP "$CONDUITD_PID"
    wait_for 5 grep -q 'reload failed' "$T/conduitd.log"
    check "HUP with a world-readable secret file is refused" \
        grep -q 'reload failed: .*holds jwt_secret and is readable by every user' "$T/conduitd.log"
    sleep 0.3
    is "the workers keep running" "$(worker_pids | sort | tr '\n' ' ')" "$before"
    chmod 640 "$T/conduitd.conf"
    kill -HUP "$CONDUITD_PID"
    wait_for 10 grep -q 'reload complete' "$T/conduitd.log"
    check "once closed to others, the reload goes through" grep -q 'reload complete' "$T/conduitd.log"
    stop_pid "$CONDUITD_PID"; CONDUITD_PID=

    "$CONDUITD" -b 127.0.0.1:0 --dev --user no-such-user-xyz >/dev/null 2>"$T/err"
    is "an unknown --user is refused at start (exit 2)" "$?" 2
else
    note "not root (or no user nobody): the privilege drop is not tested here"
fi

# ---------------------------------------------------------------- systemd
unit=etc/conduitd.service
[ -f "$unit" ] || unit=$top_srcdir/etc/conduitd.service.in
for opt in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
    PrivateDevices=yes ProtectKernelTunables=yes ProtectKernelModules=yes ProtectKernelLogs=yes \
    ProtectControlGroups=yes ProtectClock=yes ProtectHostname=yes RestrictNamespaces=yes \
    RestrictSUIDSGID=yes RestrictRealtime=yes LockPersonality=yes MemoryDenyWriteExecute=yes \
    SystemCallArchitectures=native RemoveIPC=yes UMask=0027 \
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' \
    'CapabilityBoundingSet=CAP_NET_BIND_SERVICE CAP_SETUID CAP_SETGID' \
    'SystemCallFilter=@system-service' 'SystemCallErrorNumber=EPERM'; do
    check "systemd unit: $opt" grep -qx "$opt" "$unit"
done
check "systemd unit: workers drop to a user" grep -q '^ExecStart=.* --user conduitd' "$unit"
check "systemd unit: the secret stays off the command line" sh -c "! grep -q '^ExecStart=.*jwt' '$unit'"
if command -v systemd-analyze >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    systemd-analyze verify "$unit" >"$T/verify" 2>&1
    check "systemd-analyze verify accepts the unit" sh -c "! grep -qi 'unknown\|invalid' '$T/verify'"
fi
done_testing
