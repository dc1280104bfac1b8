#!/bin/sh
# abc.sh: cache off, on (cache_memory 64 MB, the default), on (256 MB),
# interleaved, twice, at USERS users (default 8000).
here=$(dirname "$0")
USERS=${USERS:-8000}
for r in 1 2; do
    "$here/one.sh" "off-$r" off "$USERS"
    "$here/one.sh" "on64-$r" on "$USERS"
    "$here/one.sh" "on256-$r" on "$USERS" --cache-memory 256
done
