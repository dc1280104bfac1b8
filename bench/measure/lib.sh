# bench/measure/lib.sh: what the measurement scripts of bench/measure/ share, sourced right
# after they set top_srcdir: the programs they run (the build's, unless
# CONDUITD and BENCH name others) and t/lib.sh, whose helpers start and
# stop clusters, masters and nginx by pid.
CONDUITD=${CONDUITD:-$top_srcdir/build/conduitd}
BENCH=${BENCH:-$top_srcdir/build/conduit-bench}
. "$top_srcdir/t/lib.sh"
