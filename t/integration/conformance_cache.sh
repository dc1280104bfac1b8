#!/bin/sh
# The whole conformance suite again, with each worker's cache on (and kept
# in sync through LISTEN/NOTIFY): a cache must never change an answer.
CONFORMANCE_ARGS="--cache on"
. "$top_srcdir/t/integration/conformance.sh"
