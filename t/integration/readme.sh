#!/bin/sh
# The README's shell blocks work when pasted in order.  Every ```sh block
# of README.md carries a marker on the line before it: "<!-- paste: run
# -->" (or "run with S=0.01") for the small-scale ones, which this test
# runs, or "<!-- paste: not run: REASON -->"; a block without one fails
# (so a new block is classified when it is written).  The blocks to run
# are run in order, as one script, in a folder laid out as a clone
# (script/, bench/profiles/, build-release/ with the programs this build
# made, var/); it must end with no error from the shell or a command (no
# "No such file", no "not found"), every conduit-bench call exiting 0 or 1
# (1: a level failed, which a loaded machine may cause, and a person who
# pastes goes on after), never 2.  What is changed, and why:
#   - script/deps and script/build are no-ops: the harness has built
#     everything, and a test installs no package;
#   - 8080 becomes a free port (free_port: the blocks' only TCP port;
#     PostgreSQL's 54329 is a unix socket in the folder's var/pg/run, so
#     cannot collide);
#   - "S=1" becomes "S=0.01" (as the marker says), --hold becomes 2s
#     (with --settle-max 5s), --ramp 1s, --duration 2s and --max-levels 1,
#     and the warm-ups (5 s by default) of rate, compare and ceiling 1 s,
#     ceiling's measure (30 s by default) 2 s: the commands and flags are
#     run, not the durations the README states or leaves to the defaults.
# Before the fix the benchmark block read var/conduitd.pid right after
# `script/setup -w 2 &`, before the file existed (tried: the old block,
# at scale 0.01 and marked run, fails here: "cat: var/conduitd.pid: No
# such file", kill's usage, then `wait` for a server nobody stopped, cut
# by the timeout).
. "$top_srcdir/t/lib.sh"

src=$(cd "$top_srcdir" && pwd)
readme="$src/README.md"
BUILD=$(pwd)
command -v curl >/dev/null || skip "curl is not installed (script/deps test installs it)"
command -v gnuplot >/dev/null || skip "gnuplot is not installed (script/deps bench installs it)"

# Every sh block has its marker.
unmarked=$(awk '/^```sh$/ { if (prev !~ /^<!-- paste: (run( with S=0\.01)?|not run: .+) -->$/) print NR } { prev = $0 }' "$readme" | tr '\n' ' ')
is "every sh block of README.md says whether this test runs it" "${unmarked:-none}" none
nrun=$(grep -c '^<!-- paste: run' "$readme")
check "some blocks are run ($nrun)" [ "$nrun" -gt 0 ]

# The blocks to run, in order, each with its substitutions.
PORT=$(free_port) || bail "no free port found"
awk -v port="$PORT" '
    /^<!-- paste: run/ { want = 1; small = ($0 ~ /S=0\.01/); next }
    want && /^```sh$/ { inblock = 1; next }
    inblock && /^```$/ { inblock = 0; want = 0; print "# ---- end of a block"; next }
    inblock {
        gsub(/8080/, port)
        if (small) sub(/^S=1 /, "S=0.01 ")
        gsub(/--hold [0-9a-z]+/, "--hold 2s --settle-max 5s"); gsub(/--ramp [0-9a-z]+/, "--ramp 1s")
        gsub(/--duration [0-9a-z]+/, "--duration 2s"); gsub(/--max-levels [0-9]+/, "--max-levels 1")
        if ($0 ~ /^(\$B|build-release\/conduit-bench) (rate|compare|ceiling) /) {
            if ($2 == "ceiling" && $0 !~ /--duration/) sub(/ ceiling /, " ceiling --duration 2s ")
            sub(/ (rate|compare|ceiling) /, "&--warmup 1s ")
        }
        print
        next
    }
    { want = want && ($0 ~ /^$/) }
' "$readme" >"$T/blocks.sh"
note "the blocks as run: $T/blocks.sh ($(wc -l <"$T/blocks.sh") lines, port $PORT)"

# The clone.
C="$T/clone"
mkdir -p "$C/script" "$C/build-release" "$C/bench/profiles"
cp "$src/script/setup" "$src/script/seed" "$src/script/pg-cluster" "$C/script/"
for s in deps build; do
    printf '#!/bin/sh\n# script/%s: done by the test harness\nexit 0\n' "$s" >"$C/script/$s"
done
chmod +x "$C/script/"*
cp "$BUILD/conduitd" "$BUILD/conduit-seed" "$C/build-release/"
# conduit-bench's exit statuses are recorded by a wrapper around the real
# program (which stays in build-release/, where it finds ../bench/profiles).
cp "$BUILD/conduit-bench" "$C/build-release/conduit-bench.real"
cat >"$C/build-release/conduit-bench" <<WRAP
#!/bin/sh
t=\$(date +%s)
"$C/build-release/conduit-bench.real" "\$@"
rc=\$?
echo "\$rc \$1 \$((\$(date +%s) - t))s" >>"$C/bench-exits"
exit \$rc
WRAP
chmod +x "$C/build-release/conduit-bench"
cp "$src/bench/profiles/default.json" "$C/bench/profiles/"
[ "$(id -u)" = 0 ] && chmod -R a+rX "$T" # the cluster runs as postgres

# Whatever the blocks leave running is stopped, by pid, on any exit.
cleanup_clone() {
    [ -f "$C/var/conduitd.pid" ] && stop_pid "$(cat "$C/var/conduitd.pid")"
    [ -d "$C/var/pg/data" ] && (cd "$C" && script/pg-cluster stop "$C/var/pg" 54329) >/dev/null 2>&1
    return 0
}
trap 'cleanup_clone; cleanup; exit 1' INT TERM HUP
# Bounded: a block that waits for ever (the old one's `wait` on a server
# it could not stop) fails the test instead of hanging it.
t0=$(date +%s)
(cd "$C" && PATH="$PATH:/usr/sbin" timeout -k 10 600 sh "$T/blocks.sh") >"$T/blocks.out" 2>&1
rc=$?
t1=$(date +%s)
note "the blocks took $((t1 - t0)) s"
is "the blocks' last command exits 0" "$rc" 0
errs=$(grep -n -i -e 'no such file' -e 'not found' -e 'cannot ' -e 'syntax error' -e 'usage:' \
    "$T/blocks.out" | head -n 5)
is "no command complained" "${errs:-none}" none
calls=$(grep -c '^\$B \|^build-release/conduit-bench ' "$T/blocks.sh")
is "every conduit-bench call ran" "$(wc -l <"$C/bench-exits" 2>/dev/null | tr -d ' ')" "$calls"
is "none exited 2 (bad arguments or an error)" "$(awk '$1 >= 2' "$C/bench-exits" | tr '\n' ' ')" ""
failed=$(awk '$1 == 1 { printf "%s ", $2 }' "$C/bench-exits")
[ -n "$failed" ] && note "levels failed (allowed: the machine is shared) in: $failed"
note "conduit-bench calls (status, mode, seconds): $(tr '\n' ';' <"$C/bench-exits")"
if [ "$rc" != 0 ] || [ -n "$errs" ]; then tail -n 30 "$T/blocks.out" | sed 's/^/#   /'; fi
check "conduitd served through the run (its log says ready)" grep -q 'worker(s) ready' "$C/var/setup.log"
check "run judged its level" grep -q '^level .*users result' "$T/blocks.out"
check "compare wrote its chart" sh -c "ls '$C'/var/compare-*/compare.png >/dev/null 2>&1"
check "the last block stopped conduitd (no pidfile left)" [ ! -e "$C/var/conduitd.pid" ]
check "and the cluster" sh -c "! (cd '$C' && script/pg-cluster status '$C/var/pg' 54329) >/dev/null 2>&1"
cleanup_clone
done_testing
