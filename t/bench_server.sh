# t/bench_server.sh: what the conduit-bench tests share, sourced after
# t/lib.sh: the programs, and a real conduitd (2 workers, pool 2) on a real
# PostgreSQL seeded by conduit-seed at a tiny scale (0.002: 200 users,
# 1,000 articles) with cheap hashes (bcrypt cost 4).
command -v jq >/dev/null || skip "jq is not installed"
BENCH=${CONDUIT_BENCH:-$(pwd)/conduit-bench}
SEED=${CONDUIT_SEED:-$(pwd)/conduit-seed}
S=0.002
bench_server_start() {
    PG_NO_SCHEMA=1 pg_start
    "$SEED" --scale $S --bcrypt-cost 4 --db "$DB" -q >"$T/seed.out" 2>&1 ||
        bail "conduit-seed failed: $(cat "$T/seed.out")"
    # A patient server: these tests judge the generator, with levels far
    # past what pool 2 serves and lenient bounds (p95 10 s, 50 errors); a
    # standing queue's 503s (queue_standing_timeout) would fail the level
    # the test means to pass.
    conduitd_start -w 2 --pool 2 --queue-standing-timeout 0
}
