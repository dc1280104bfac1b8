#!/bin/sh
# ab.sh: conduitd's CPU a request with the epoll changes batched (this
# checkout's build-release/conduitd) against without (BEFORE: a conduitd
# built at 6e8bfcf, e.g. `git worktree add /tmp/before 6e8bfcf && (cd
# /tmp/before && BUILD_DIR=build-release script/build)`), at USERS users
# (default 8000), cache off, interleaved: before, after, after, before,
# before, after.  Each run through docs/results/20261206-cache-pages/one.sh
# (conduitd -w 2 --pool 4 started afresh, a 20 s ramp, a 60 s hold), and
# 55 s into each, `perf stat` of one worker's syscalls for 10 s
# (NAME-syscalls.txt).
cd "$(dirname "$0")/../../.." || exit 1
: "${BEFORE:?set BEFORE to a conduitd built at 6e8bfcf}"
export OUT=docs/results/20261207-changelist
USERS=${USERS:-8000}
one=docs/results/20261206-cache-pages/one.sh
# syscalls NAME: in the background, 55 s from now, 10 s of one worker's
# syscalls (found by its process title: nothing else runs conduitd here).
syscalls() {
    (
        sleep 55
        w=$(pgrep -f "^conduitd: worker 0" | head -n 1)
        perf stat -e syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_epoll_wait \
            -e syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,syscalls:sys_enter_writev \
            -e syscalls:sys_enter_readv,syscalls:sys_enter_ioctl,syscalls:sys_enter_accept4 \
            -p "$w" -- sleep 10 >"$OUT/$1-syscalls.txt" 2>&1
    ) &
}
syscalls before-1
CONDUITD=$BEFORE $one before-1 off "$USERS"
syscalls after-1
$one after-1 off "$USERS"
syscalls after-2
$one after-2 off "$USERS"
syscalls before-2
CONDUITD=$BEFORE $one before-2 off "$USERS"
syscalls before-3
CONDUITD=$BEFORE $one before-3 off "$USERS"
syscalls after-3
$one after-3 off "$USERS"

wait
