#!/bin/sh
# failover.sh over TCP on 127.0.0.1 at two ports (as a primary and its
# standby on two machines are named in a connection string), plus a first
# host that refuses and one that accepts and never answers: see the header
# of failover.sh.
FAILOVER_TCP=1
. "$top_srcdir/t/integration/failover.sh"
