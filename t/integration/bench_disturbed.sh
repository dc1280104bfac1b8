#!/bin/sh
# conduit-bench experiment: verdicts from repeats, and disturbed levels
# refused.  A tiny matrix (one core, one worker, cache off and on) under
# --budget plays each configuration twice, interleaved (A B A B), and the
# report gives the median and range of every repeat, the published
# figures beside ours (table and chart), the estimate against the time
# taken, and every thread pinned where it was put.  Then a CPU burner this
# test starts on every core makes each level's "other" CPU far above the
# bound: every level is played again after the pause, disturbed again, and
# the report's first lines count them and the findings draw no conclusion.
# A load average (from a file) above the cores disturbs the same way.
. "$top_srcdir/t/lib.sh"
. "$top_srcdir/t/bench_server.sh"
command -v gnuplot >/dev/null || skip "gnuplot is not installed (script/deps installs it)"
[ "$(nproc)" -eq 2 ] || skip "written for 2 cores (the generator on a core of its own)"
P="--profile $top_srcdir/bench/profiles/default.json --reference $top_srcdir/bench/reference"
PG_NO_SCHEMA=1 pg_start
"$SEED" --scale $S --bcrypt-cost 4 --db "$DB" -q >"$T/seed.out" 2>&1 ||
    bail "conduit-seed failed: $(cat "$T/seed.out")"
FAST="--scale $S --think-mean 100ms --think-cap 1s --session 4s --start 8 --ramp 1s --hold 2s \
    --warmup 0 --little-tol 25 --pool 2 --quiet --cores 1 --workers 1 --instances 1 --max-levels 2"

# ---------------------------------------------------------------- bad input
mkdir "$T/bad"
"$BENCH" experiment $P --db "$DB" $FAST --cache off --budget 10s --out "$T/bad" >"$T/out" 2>&1
is "a budget too short: exits 2" "$?" 2
check "and says what one repeat takes" grep -q -- '--budget 10 s: too short for 1 configurations: one repeat at 2 s holds takes about' "$T/out"
"$BENCH" experiment $P --db "$DB" $FAST --repeat 11 --out "$T/bad" >"$T/out" 2>&1
is "--repeat 11: exits 2" "$?" 2
"$BENCH" search $P --repeat 2 >"$T/out" 2>&1
is "--repeat outside compare and experiment: exits 2" "$?" 2
check "says so" grep -q 'only compare and experiment repeat' "$T/out"
is "nothing was written" "$(ls -A "$T/bad" | wc -l)" 0

# ---------------------------------------------------------------- repeats
mkdir "$T/rep"
"$BENCH" experiment $P --db "$DB" $FAST --cache off,on --budget 10m --repeat 2 \
    --disturbed-other off --out "$T/rep" >"$T/rep.out" 2>"$T/rep.err"
is "experiment exits 0" "$?" 0
D=$(ls -d "$T"/rep/experiment-* | head -n 1)
check "the budget's choice is said" grep -q '^budget 10 min 00 s: chose 2 repeats of 2 s holds (as given) (about ' "$T/rep.err"
# Interleaved: off, on, off, on.
grep -o '^\[[0-9]/4 [^]]*\]' "$T/rep.err" | uniq >"$T/order"
is "the plays interleave" "$(cut -d' ' -f2- "$T/order" | tr '\n' ';')" \
    "c1 1x1 cache-off repeat 1/2];c1 1x1 cache-on repeat 1/2];c1 1x1 cache-off repeat 2/2];c1 1x1 cache-on repeat 2/2];"
is "two repeats each" "$(jq -c '[.configurations[].repeats_played]' "$D/experiment.json")" '[2,2]'
is "every repeat kept" "$(jq '[.configurations[].repeats | length] | add' "$D/experiment.json")" 4
check "the second repeat's levels" [ -s "$D/levels/c1-1x1-cache-on-r2.json" ]
check "and its servers' folder" [ -d "$D/c1-1x1-cache-off-r2" ]
is "every thread ran where it was pinned" \
    "$(jq '[.configurations[].repeats[].pinning_ok] | all' "$D/experiment.json")" true
is "threads were checked" \
    "$(jq '[.configurations[].repeats[].search.levels[].pinning_threads_checked] | all(. > 3)' "$D/experiment.json")" true
# The median of the repeats and their range, from the JSON.
python3 - "$D" >"$T/median.out" 2>&1 <<'PY'
import json, sys
d = sys.argv[1]
doc = json.load(open(d + "/experiment.json"))
md = open(d + "/report.md").read().split("## Repeats")[1].split("## Capacity")[0]
bad = 0
for c in doc["configurations"]:
    u = sorted(r["users_passed"] for r in c["repeats"])
    med = (u[0] + u[1]) / 2
    cell = "%.0f" % med + ("" if u[0] == u[1] else " (%d to %d)" % (u[0], u[1]))
    row = [l for l in md.splitlines() if l.startswith("| " + c["configuration"] + " | 2 | ")]
    if not row or row[0].split(" | ")[2] != cell:
        bad += 1
        print("%s: want %s in %s" % (c["configuration"], cell, row))
print("configurations checked: %d, differing: %d" % (len(doc["configurations"]), bad))
sys.exit(1 if bad else 0)
PY
is "the repeats table gives the median and range" "$?" 0
note "$(cat "$T/median.out")"
check "the first lines say the check was off" sh -c "sed -n 3p '$D/report.md' | grep -q 'Disturbed levels: not checked'"
check "the estimate against the time taken" grep -q 'Time\*\*: estimated .* before the run, took ' "$D/report.md"
check "the reference's Python rows" grep -q '^| Python FastAPI + Uvicorn (2N+1 workers) | 8 | 9,300 | 1,162 |' "$D/report.md"
check "the Aidbox table" grep -q '^| 8x1 | 8 | 1 | 3,926 |' "$D/report.md"
check "the caveats" grep -q 'their holds were 5 minutes' "$D/report.md"
check "reference.png is a PNG" sh -c "head -c 8 '$D/reference.png' | od -c | grep -q 'P   N   G'"
check "the rule is stated" grep -q 'only when the worst repeat of one configuration beats the best' "$D/report.md"

# ---------------------------------------------------------------- disturbed
# A burner per core: what another helper's build does to a level.
burners=
for i in $(seq "$(nproc)"); do
    sh -c 'while :; do :; done' &
    burners="$burners $!"
done
mkdir "$T/dist"
"$BENCH" experiment $P --db "$DB" $FAST --cache off --repeat 1 --disturbed-pause 1s \
    --out "$T/dist" >"$T/dist.out" 2>"$T/dist.err"
rc=$?
kill $burners
is "a disturbed experiment still ends with its report" "$rc" 0
D=$(ls -d "$T"/dist/experiment-* | head -n 1)
n=$(jq '.disturbed_levels' "$D/experiment.json")
check "levels were disturbed ($n)" [ "$n" -ge 2 ]
is "the configuration's result is disturbed" "$(jq '.configurations[0].disturbed' "$D/experiment.json")" true
check "each disturbed level was played again after the pause" grep -q 'disturbed: other processes used .* replayed after a pause' "$T/dist.err"
check "and was disturbed again" grep -q 'disturbed again: other processes used' "$T/dist.err"
check "the report's first lines count them" sh -c "sed -n 3p '$D/report.md' | grep -q '^\*\*Disturbed levels: $n\*\*; configurations whose result stayed disturbed: 1'"
check "and name the configuration" grep -q '^Disturbed, no conclusion drawn: c1 1x1 cache-off' "$D/report.md"
check "the findings draw no conclusion" grep -q 'c1 1x1 cache-off was disturbed .*: no conclusion is drawn from it. No configuration passed a level undisturbed' "$D/report.md"
check "and print none" sh -c "! grep -q 'served the most users' '$T/dist.out'"
is "its search stopped there" "$(jq -r '.configurations[0].search.stopped' "$D/experiment.json")" \
    "a level stayed disturbed when played again"
is "the level says why" "$(jq -r '[.configurations[0].search.levels[] | select(.disturbed) | .disturbed_why][0]' "$D/experiment.json" | cut -c1-20)" \
    "other processes used"

# The load average not ours above the cores, with no burner: from a file.
echo "40.00 40.00 40.00 1/100 1" >"$T/loadavg"
mkdir "$T/load"
CONDUIT_BENCH_LOADAVG="$T/loadavg" "$BENCH" experiment $P --db "$DB" $FAST --cache off --repeat 1 \
    --disturbed-other 100 --disturbed-pause 0 --max-levels 1 --out "$T/load" >"$T/load.out" 2>"$T/load.err"
D=$(ls -d "$T"/load/experiment-* | head -n 1)
is "a load average above the cores disturbs" "$(jq '.configurations[0].disturbed' "$D/experiment.json")" true
check "and says so" grep -q 'load average 40.00 before it began, .* of it not ours, above the 2 cores' "$T/load.err"
done_testing
