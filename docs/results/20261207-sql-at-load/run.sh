#!/bin/sh
# run.sh: the cache off before and after the SQL work of issue 17, and the
# cache on, in one sitting.  BEFORE: a conduitd from build-before.sh (the
# feed's statement before the rework); this checkout's build-release for
# the rest.  Each run is docs/results/20261206-cache-pages/one.sh
# (conduitd -w 2 --pool 4, 20 s ramp, 60 s hold, every worker's /healthz,
# pg_stat_statements reset first), at 8,000 users twice (orders swapped)
# and at 16,000 once.
cd "$(dirname "$0")/../../.." || exit 1
: "${BEFORE:?set BEFORE to the conduitd build-before.sh printed}"
export OUT=docs/results/20261207-sql-at-load
one=docs/results/20261206-cache-pages/one.sh
CONDUITD=$BEFORE $one u8000-before-off-1 off 8000
$one u8000-after-off-1 off 8000
$one u8000-after-on-1 on 8000
$one u8000-after-off-2 off 8000
CONDUITD=$BEFORE $one u8000-before-off-2 off 8000
$one u8000-after-on-2 on 8000
CONDUITD=$BEFORE $one u16000-before-off off 16000
$one u16000-after-off off 16000
$one u16000-after-on on 16000
