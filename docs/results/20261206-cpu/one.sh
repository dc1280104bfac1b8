#!/bin/sh
# one.sh BIN NAME USERS [PERF]: start BIN -w 2 --pool 4 --cache off on 127.0.0.1:18391 against
# the scale-1 cluster of $TOP/var/pg (port 54339), conduit-bench run USERS (RAMP, HOLD seconds),
# stop it.  PERF=stat counts the syscalls of worker 0 for 10 s in the hold, PERF=record
# profiles it (PERFREC: perf record's call-graph option).  TOP: the checkout; OUT: where the
# reports go.
BIN=$1 NAME=$2 USERS=$3 PERF=${4:-}
W=${TOP:?} OUT=${OUT:?}
PORT=18391
env ${CENV:-X=1} "$BIN" -w 2 --pool 4 --cache ${CACHE:-off} -b 127.0.0.1:$PORT --dev --allow-root --bcrypt-cost 4 \
  --db "host=$W/var/pg/run port=54339 user=postgres dbname=conduit" >$OUT/$NAME.log 2>&1 &
MPID=$!
sleep 2
if [ -n "$PERF" ]; then
  ( sleep $(( ${RAMP:-20} + 50 )); WP=$(pgrep -P $MPID | head -1); echo "perf on worker $WP" >&2;
    if [ "$PERF" = stat ]; then
      perf stat -e 'syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,syscalls:sys_enter_writev,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_readv,syscalls:sys_enter_accept4,syscalls:sys_enter_close,syscalls:sys_enter_ioctl,syscalls:sys_enter_clock_gettime' -p $WP -- sleep 10 >$OUT/$NAME.perf.log 2>&1
    else
      perf record ${PERFREC:--g} -o $OUT/$NAME.perf.data -p $WP -- sleep ${PERFSEC:-20} >$OUT/$NAME.perf.log 2>&1
    fi ) &
fi
$TOP/build-release/conduit-bench run --users $USERS --ramp ${RAMP:-20}s --hold ${HOLD:-40}s --port $PORT --profile $TOP/bench/profiles/default.json \
  --server-pid $MPID --pg-data $W/var/pg/data --json $OUT/$NAME.json --out $OUT ${BENCHARGS:-} >$OUT/$NAME.txt 2>$OUT/$NAME.err
kill -TERM $MPID; wait $MPID
wait
