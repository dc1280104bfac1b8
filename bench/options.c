/*
 * options: see options.h.
 */
#include "config.h"

#include "bench/options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/spread.h"
#include "bench/units.h"

void
options_usage(FILE *f)
{
    fputs(
        "usage: conduit-bench MODE [OPTIONS]\n"
        "modes:\n"
        "  run      --users U [--ramp 30s] [--hold 5m]      one load level, judged\n"
        "  search   [--start U] [--max-users U]             capacity: ramp, hold, bisect\n"
        "  rate     --rps R [--duration 30s]                open loop at a constant rate\n"
        "  compare  --workers 1,n,2n+1 --db CONNINFO        start conduitd per configuration,\n"
        "           [--pool K] [--cores C] [--reuseport]    search each, table and chart\n"
        "           [--instances I]\n"
        "  ceiling  --db CONNINFO                           the profile's SQL through libpq\n"
        "  experiment --db CONNINFO [--cores 1,2]           the matrix: cores x workers x "
        "instances\n"
        "           [--workers 1,n,2n+1] [--instances 1,2]  x cache, searched one by one, into\n"
        "           [--cache off,on]                        report.md, JSON and charts\n"
        "           [--repeat K (3)] [--budget D]           K searches each, interleaved\n"
        "           [--reference DIR]                       the published figures beside ours\n"
        "target and load:\n"
        "  --host ADDR (127.0.0.1)  --port P (8080)  --profile FILE  --scale F (1)  --seed N (1)\n"
        "  --source ADDR (127.0.0.2)  --sources N (auto)  --think-mean D  --think-cap D\n"
        "  --session D  --settle-max D (2m)  --no-probe\n"
        "  --procs N|auto (auto: enough generator processes for the file limit)\n"
        "pass criteria (docs/workload.md):\n"
        "  --p95 D (500ms)  --p99 D (1s)  --max-errors PCT (1)  --little-tol PCT (5)\n"
        "  --gen-cpu-max PCT (80)\n"
        "search:  --min-users U (1)  --growth X (2)  --resolution PCT (5)  --max-levels N (20)\n"
        "         --no-rerun  --disturbed-other PCT|off (5; experiment)  --disturbed-pause D "
        "(30s)\n"
        "rate:    --warmup D (5s)  --connections N (64)\n"
        "accounting: --server-pid PID (repeatable)  --pg-pid PID | --pg-data DIR  --nginx-pid PID\n"
        "compare: --conduitd PATH  --nginx PATH  --base-port P (18080)  --no-ceiling  --cache "
        "on|off\n"
        "ceiling: --depth N (16)  --ceiling-connections N (workers x pool)\n"
        "output:  --json FILE  --out DIR (.)  --quiet\n"
        "durations take us, ms, s, m or h; a bare number is seconds.\n",
        f);
}

enum {
    O_HOST = 256,
    O_PORT,
    O_PROFILE,
    O_SCALE,
    O_SEED,
    O_SOURCE,
    O_SOURCES,
    O_THINK_MEAN,
    O_THINK_CAP,
    O_SESSION,
    O_SETTLE,
    O_P95,
    O_P99,
    O_MAXERR,
    O_LITTLE,
    O_GENCPU,
    O_USERS,
    O_RAMP,
    O_HOLD,
    O_START,
    O_MAXUSERS,
    O_MINUSERS,
    O_GROWTH,
    O_RESOLUTION,
    O_MAXLEVELS,
    O_NORERUN,
    O_RPS,
    O_DURATION,
    O_WARMUP,
    O_CONNECTIONS,
    O_SERVERPID,
    O_PGPID,
    O_PGDATA,
    O_NGINXPID,
    O_WORKERS,
    O_POOL,
    O_CORES,
    O_REUSEPORT,
    O_INSTANCES,
    O_CONDUITD,
    O_DB,
    O_NGINX,
    O_BASEPORT,
    O_NGINXCONF,
    O_DEPTH,
    O_CEILCONNS,
    O_NOCEILING,
    O_NOPROBE,
    O_CACHE,
    O_PROCS,
    O_JSON,
    O_OUT,
    O_QUIET,
    O_REPEAT,
    O_BUDGET,
    O_DISTURBED,
    O_DISTURBED_PAUSE,
    O_REFERENCE,
    O_HELP
};

static const struct option longopts[] = {
    {"host", required_argument, 0, O_HOST},
    {"port", required_argument, 0, O_PORT},
    {"profile", required_argument, 0, O_PROFILE},
    {"scale", required_argument, 0, O_SCALE},
    {"seed", required_argument, 0, O_SEED},
    {"source", required_argument, 0, O_SOURCE},
    {"sources", required_argument, 0, O_SOURCES},
    {"think-mean", required_argument, 0, O_THINK_MEAN},
    {"think-cap", required_argument, 0, O_THINK_CAP},
    {"session", required_argument, 0, O_SESSION},
    {"settle-max", required_argument, 0, O_SETTLE},
    {"p95", required_argument, 0, O_P95},
    {"p99", required_argument, 0, O_P99},
    {"max-errors", required_argument, 0, O_MAXERR},
    {"little-tol", required_argument, 0, O_LITTLE},
    {"gen-cpu-max", required_argument, 0, O_GENCPU},
    {"users", required_argument, 0, O_USERS},
    {"ramp", required_argument, 0, O_RAMP},
    {"hold", required_argument, 0, O_HOLD},
    {"start", required_argument, 0, O_START},
    {"max-users", required_argument, 0, O_MAXUSERS},
    {"min-users", required_argument, 0, O_MINUSERS},
    {"growth", required_argument, 0, O_GROWTH},
    {"resolution", required_argument, 0, O_RESOLUTION},
    {"max-levels", required_argument, 0, O_MAXLEVELS},
    {"no-rerun", no_argument, 0, O_NORERUN},
    {"rps", required_argument, 0, O_RPS},
    {"duration", required_argument, 0, O_DURATION},
    {"warmup", required_argument, 0, O_WARMUP},
    {"connections", required_argument, 0, O_CONNECTIONS},
    {"server-pid", required_argument, 0, O_SERVERPID},
    {"pg-pid", required_argument, 0, O_PGPID},
    {"pg-data", required_argument, 0, O_PGDATA},
    {"nginx-pid", required_argument, 0, O_NGINXPID},
    {"workers", required_argument, 0, O_WORKERS},
    {"pool", required_argument, 0, O_POOL},
    {"cores", required_argument, 0, O_CORES},
    {"reuseport", no_argument, 0, O_REUSEPORT},
    {"instances", required_argument, 0, O_INSTANCES},
    {"conduitd", required_argument, 0, O_CONDUITD},
    {"db", required_argument, 0, O_DB},
    {"nginx", required_argument, 0, O_NGINX},
    {"base-port", required_argument, 0, O_BASEPORT},
    {"nginx-template", required_argument, 0, O_NGINXCONF},
    {"depth", required_argument, 0, O_DEPTH},
    {"ceiling-connections", required_argument, 0, O_CEILCONNS},
    {"no-ceiling", no_argument, 0, O_NOCEILING},
    {"no-probe", no_argument, 0, O_NOPROBE},
    {"cache", required_argument, 0, O_CACHE},
    {"procs", required_argument, 0, O_PROCS},
    {"json", required_argument, 0, O_JSON},
    {"out", required_argument, 0, O_OUT},
    {"repeat", required_argument, 0, O_REPEAT},
    {"budget", required_argument, 0, O_BUDGET},
    {"disturbed-other", required_argument, 0, O_DISTURBED},
    {"disturbed-pause", required_argument, 0, O_DISTURBED_PAUSE},
    {"reference", required_argument, 0, O_REFERENCE},
    {"quiet", no_argument, 0, 'q'},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

static int
options_bad(char *err, size_t errlen, const char *flag, const char *arg, const char *want)
{
    /* A check of the flag alone (no value to show) reads "--db: ...", not "--db : ...". */
    snprintf(err, errlen, "--%s%s%s: %s", flag, arg && *arg ? " " : "", arg ? arg : "", want);
    return -1;
}

/* Duration flags share one shape: parse, check the range, or say why. */
static int
dur(const char *arg, double min, double *out, const char *flag, char *err, size_t errlen)
{
    if (units_duration(arg, out) < 0 || *out < min)
        return options_bad(err, errlen, flag, arg, "want a duration such as 500ms, 30s, 5m");
    return 0;
}

static int
count(const char *arg, long min, long max, int *out, const char *flag, char *err, size_t errlen)
{
    long v;

    if (units_count(arg, min, max, &v) < 0) {
        char want[64];

        snprintf(want, sizeof(want), "want a whole number from %ld to %ld", min, max);
        return options_bad(err, errlen, flag, arg, want);
    }
    *out = (int)v;
    return 0;
}

static int
pct(const char *arg, double *out, const char *flag, char *err, size_t errlen)
{
    if (units_percent(arg, out) < 0)
        return options_bad(err, errlen, flag, arg, "want a percentage from 0 to 100");
    return 0;
}

static void
defaults(struct options *o)
{
    memset(o, 0, sizeof(*o));
    o->b.host = "127.0.0.1";
    o->b.port = 8080;
    o->b.source = "127.0.0.2";
    o->b.scale = 1;
    o->b.seed = 1;
    o->b.think_mean_s = o->b.think_cap_s = o->b.session_s = -1;
    o->crit = (struct criteria)CRITERIA_DEFAULT;
    o->ramp_s = 30;
    o->hold_s = 300;
    o->settle_max_s = 120;
    o->start = 500;
    o->min_users = 1;
    o->growth = 2;
    o->resolution_pct = 5;
    o->max_levels = 20;
    o->duration_s = 30;
    o->warmup_s = 5;
    o->connections = 64;
    o->pool = 4;
    o->instances = 1;
    o->depth = 16;
    o->out_dir = ".";
    o->repeat = 1;
    o->disturbed_other_pct = -1;
    o->disturbed_pause_s = 30;
    /* The tests point it at a file they change during a run. */
    o->b.loadavg_path = getenv("CONDUIT_BENCH_LOADAVG");
}

static int
set_mode(struct options *o, const char *m, char *err, size_t errlen)
{
    static const char *const names[] = {"run",     "search",  "rate",
                                        "compare", "ceiling", "experiment"};

    for (int i = 0; i < 6; i++) {
        if (strcmp(m, names[i]) == 0) {
            o->mode = (enum bench_mode)i;
            o->mode_name = names[i];
            return 0;
        }
    }
    snprintf(err, errlen, "unknown mode '%s' (run, search, rate, compare, ceiling, experiment)", m);
    return -1;
}

static int
one(struct options *o, int c, const char *arg, const char *flag, char *err, size_t errlen)
{
    long l;
    int i;

    switch (c) {
    case O_HOST:
        o->b.host = arg;
        return 0;
    case O_PORT:
        return count(arg, 1, 65535, &o->b.port, flag, err, errlen);
    case O_PROFILE:
        o->profile = arg;
        return 0;
    case O_SCALE:
        if (units_duration(arg, &o->b.scale) < 0 || !(o->b.scale > 0) || o->b.scale > 100)
            return options_bad(err, errlen, flag, arg, "want a number in (0, 100]");
        return 0;
    case O_SEED:
        if (units_count(arg, 0, 0x7fffffffL, &l) < 0)
            return options_bad(err, errlen, flag, arg, "want a whole number >= 0");
        o->b.seed = (uint64_t)l;
        return 0;
    case O_SOURCE:
        o->b.source = arg;
        return 0;
    case O_SOURCES:
        return count(arg, 1, CONN_MAX_SOURCES, &o->b.sources, flag, err, errlen);
    case O_THINK_MEAN:
        return dur(arg, 0, &o->b.think_mean_s, flag, err, errlen);
    case O_THINK_CAP:
        return dur(arg, 0, &o->b.think_cap_s, flag, err, errlen);
    case O_SESSION:
        return dur(arg, 0.001, &o->b.session_s, flag, err, errlen);
    case O_SETTLE:
        return dur(arg, 0, &o->settle_max_s, flag, err, errlen);
    case O_P95:
        if (dur(arg, 0, &o->crit.p95_ms, flag, err, errlen) < 0)
            return -1;
        o->crit.p95_ms *= 1e3;
        return 0;
    case O_P99:
        if (dur(arg, 0, &o->crit.p99_ms, flag, err, errlen) < 0)
            return -1;
        o->crit.p99_ms *= 1e3;
        return 0;
    case O_MAXERR:
        return pct(arg, &o->crit.max_errors_pct, flag, err, errlen);
    case O_LITTLE:
        return pct(arg, &o->crit.little_tol_pct, flag, err, errlen);
    case O_GENCPU:
        return pct(arg, &o->crit.gen_cpu_max_pct, flag, err, errlen);
    case O_USERS:
        return count(arg, 0, 1000000, &o->users, flag, err, errlen);
    case O_RAMP:
        o->set_ramp = 1;
        return dur(arg, 0, &o->ramp_s, flag, err, errlen);
    case O_HOLD:
        o->set_hold = 1;
        return dur(arg, 0.5, &o->hold_s, flag, err, errlen);
    case O_START:
        return count(arg, 1, 1000000, &o->start, flag, err, errlen);
    case O_MAXUSERS:
        return count(arg, 1, 1000000, &o->b.max_users, flag, err, errlen);
    case O_MINUSERS:
        return count(arg, 1, 1000000, &o->min_users, flag, err, errlen);
    case O_GROWTH:
        if (units_duration(arg, &o->growth) < 0 || o->growth <= 1 || o->growth > 100)
            return options_bad(err, errlen, flag, arg, "want a factor above 1, such as 2 or 1.5");
        return 0;
    case O_RESOLUTION:
        return pct(arg, &o->resolution_pct, flag, err, errlen);
    case O_MAXLEVELS:
        o->set_max_levels = 1;
        return count(arg, 1, 1000, &o->max_levels, flag, err, errlen);
    case O_NORERUN:
        o->no_rerun = 1;
        return 0;
    case O_RPS:
        if (units_duration(arg, &o->rps) < 0 || !(o->rps > 0) || o->rps > 1e6)
            return options_bad(err, errlen, flag, arg,
                               "want a rate in requests per second, up to 1e6");
        return 0;
    case O_DURATION:
        return dur(arg, 0.5, &o->duration_s, flag, err, errlen);
    case O_WARMUP:
        o->set_warmup = 1;
        return dur(arg, 0, &o->warmup_s, flag, err, errlen);
    case O_CONNECTIONS:
        return count(arg, 1, 1000000, &o->connections, flag, err, errlen);
    case O_SERVERPID:
        if (o->nserver_pids == OPT_MAX_PIDS)
            return options_bad(err, errlen, flag, arg, "too many");
        if (count(arg, 1, 0x7fffffff, &i, flag, err, errlen) < 0)
            return -1;
        o->server_pid[o->nserver_pids++] = i;
        return 0;
    case O_PGPID:
        if (count(arg, 1, 0x7fffffff, &i, flag, err, errlen) < 0)
            return -1;
        o->pg_pid = i;
        return 0;
    case O_PGDATA:
        o->pg_data = arg;
        return 0;
    case O_NGINXPID:
        if (count(arg, 1, 0x7fffffff, &i, flag, err, errlen) < 0)
            return -1;
        o->nginx_pid = i;
        return 0;
    case O_WORKERS:
        o->workers_spec = arg;
        return 0;
    case O_POOL:
        return count(arg, 1, 256, &o->pool, flag, err, errlen);
    case O_CORES:
        o->cores_spec = arg;
        /* experiment takes a list, checked with the matrix */
        return o->mode == MODE_EXPERIMENT ? 0 : count(arg, 1, 4096, &o->cores, flag, err, errlen);
    case O_REUSEPORT:
        o->reuseport = 1;
        return 0;
    case O_INSTANCES:
        o->instances_spec = arg;
        return o->mode == MODE_EXPERIMENT ? 0 : count(arg, 1, 64, &o->instances, flag, err, errlen);
    case O_CACHE:
        o->cache_spec = arg;
        if (o->mode == MODE_EXPERIMENT)
            return 0;
        if (strcmp(arg, "on") && strcmp(arg, "off"))
            return options_bad(err, errlen, flag, arg, "want on or off");
        o->cache = strcmp(arg, "on") == 0;
        return 0;
    case O_CONDUITD:
        o->conduitd = arg;
        return 0;
    case O_DB:
        o->db = arg;
        return 0;
    case O_NGINX:
        o->nginx = arg;
        return 0;
    case O_BASEPORT:
        return count(arg, 1024, 65000, &o->base_port, flag, err, errlen);
    case O_NGINXCONF:
        o->nginx_template = arg;
        return 0;
    case O_DEPTH:
        return count(arg, 1, 1024, &o->depth, flag, err, errlen);
    case O_CEILCONNS:
        return count(arg, 1, 1024, &o->ceiling_conns, flag, err, errlen);
    case O_NOCEILING:
        o->no_ceiling = 1;
        return 0;
    case O_NOPROBE:
        o->no_probe = 1;
        return 0;
    case O_PROCS:
        if (strcmp(arg, "auto") == 0) {
            o->procs = 0;
            return 0;
        }
        return count(arg, 1, 24, &o->procs, flag, err, errlen);
    case O_JSON:
        o->json = arg;
        return 0;
    case O_OUT:
        o->out_dir = arg;
        return 0;
    case O_REPEAT:
        o->set_repeat = 1;
        return count(arg, 1, SPREAD_MAX, &o->repeat, flag, err, errlen);
    case O_BUDGET:
        return dur(arg, 1, &o->budget_s, flag, err, errlen);
    case O_DISTURBED:
        o->set_disturbed = 1;
        if (strcmp(arg, "off") == 0) {
            o->disturbed_other_pct = -1;
            return 0;
        }
        return pct(arg, &o->disturbed_other_pct, flag, err, errlen);
    case O_DISTURBED_PAUSE:
        return dur(arg, 0, &o->disturbed_pause_s, flag, err, errlen);
    case O_REFERENCE:
        o->reference_dir = arg;
        return 0;
    case 'q':
        o->b.quiet = 1;
        return 0;
    default:
        break;
    }
    snprintf(err, errlen, "unknown option (see conduit-bench --help)");
    return -1;
}

/*
 * The experiment's matrix, and its defaults: the full matrix at a short
 * hold (a sketch of the reference experiment in about half an hour at
 * scale 1 on two cores; docs/workload.md asks five-minute holds, which
 * --hold 5m gives).
 */
static int
experiment_defaults(struct options *o, char *err, size_t errlen)
{
    int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    char cores[16];

    snprintf(cores, sizeof(cores), ncpu > 1 ? "1,2" : "1");
    if (!o->set_hold)
        o->hold_s = 12;
    if (!o->set_ramp)
        o->ramp_s = 6;
    if (!o->set_warmup)
        o->warmup_s = 6;
    if (!o->set_max_levels)
        o->max_levels = 8;
    if (!o->set_repeat)
        o->repeat = 3;
    if (!o->set_disturbed)
        o->disturbed_other_pct = 5;
    o->nmatrix = matrix_expand(
        o->cores_spec ? o->cores_spec : cores, o->workers_spec ? o->workers_spec : "1,n,2n+1",
        o->instances_spec ? o->instances_spec : "1,2", o->cache_spec ? o->cache_spec : "off,on",
        ncpu, o->matrix, MATRIX_MAX, err, errlen);
    return o->nmatrix < 0 ? -1 : 0;
}

/* What each mode cannot do without. */
static int
check_mode(struct options *o, char *err, size_t errlen)
{
    long cores = o->cores ? o->cores : sysconf(_SC_NPROCESSORS_ONLN);

    if (o->mode == MODE_RUN && o->users < 1)
        return options_bad(err, errlen, "users", "", "run needs --users U (at least 1)");
    if (o->mode == MODE_RATE && o->rps <= 0)
        return options_bad(err, errlen, "rps", "", "rate needs --rps R");
    o->b.precise_timer = o->mode == MODE_RATE;
    if (o->procs > 1 && (o->mode == MODE_RATE || o->mode == MODE_CEILING))
        return options_bad(err, errlen, "procs", "",
                           "only run, search, compare and experiment use several processes");
    /* An empty DATABASE_URL is none: libpq would read it as "every default". */
    if ((o->mode == MODE_COMPARE || o->mode == MODE_CEILING || o->mode == MODE_EXPERIMENT) &&
        !o->db && !(getenv("DATABASE_URL") && *getenv("DATABASE_URL")))
        return options_bad(err, errlen, "db", "", "needs a connection string (or DATABASE_URL)");
    if (o->mode == MODE_COMPARE) {
        o->nworkers = matrix_workers(o->workers_spec ? o->workers_spec : "1,n,2n+1", (int)cores,
                                     o->workers, OPT_MAX_CONFIGS);
        if (o->nworkers < 0)
            return options_bad(err, errlen, "workers", o->workers_spec,
                               "want a list such as 1,n,2n+1 (numbers, n, Kn, n+B, Kn+B)");
        for (int i = 0; i < o->nworkers; i++)
            if (o->workers[i] % o->instances) {
                snprintf(err, errlen,
                         "--instances %d: every worker count must divide among the instances "
                         "(%d does not)",
                         o->instances, o->workers[i]);
                return -1;
            }
    }
    if (o->mode == MODE_EXPERIMENT && experiment_defaults(o, err, errlen) < 0)
        return -1;
    if (o->set_repeat && o->mode != MODE_EXPERIMENT && o->mode != MODE_COMPARE)
        return options_bad(err, errlen, "repeat", "",
                           "only compare and experiment repeat their searches");
    if (o->budget_s > 0 && o->mode != MODE_EXPERIMENT)
        return options_bad(err, errlen, "budget", "", "only experiment has a budget");
    if (o->mode == MODE_COMPARE && !o->set_repeat)
        o->repeat = 3;
    if (o->cache_spec && o->mode != MODE_COMPARE && o->mode != MODE_EXPERIMENT)
        return options_bad(err, errlen, "cache", o->cache_spec,
                           "only compare and experiment start servers");
    if (o->cores && o->cores > sysconf(_SC_NPROCESSORS_ONLN)) {
        snprintf(err, errlen, "--cores %d: this machine has %ld", o->cores,
                 sysconf(_SC_NPROCESSORS_ONLN));
        return -1;
    }
    if (o->mode == MODE_SEARCH && o->b.max_users && o->b.max_users < o->min_users) {
        snprintf(err, errlen, "--max-users %d: below --min-users %d", o->b.max_users, o->min_users);
        return -1;
    }
    if (!o->b.max_users)
        o->b.max_users = o->mode == MODE_RUN    ? o->users
                         : o->mode == MODE_RATE ? o->connections
                                                : 100000;
    return 0;
}

int
options_parse(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    int c, idx;

    defaults(o);
    o->argc = argc;
    o->argv = argv;
    if (argc < 2) {
        snprintf(err, errlen,
                 "no mode given (run, search, rate, compare, ceiling, experiment; --help)");
        return -1;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        options_usage(stdout);
        return 1;
    }
    if (set_mode(o, argv[1], err, errlen) < 0)
        return -1;
    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "qh", longopts, &idx)) != -1) {
        const char *flag = c >= 256 ? longopts[idx].name : "";

        if (c == 'h') {
            options_usage(stdout);
            return 1;
        }
        if (c == '?' || c == ':') {
            snprintf(err, errlen, "%s: unknown option or missing value (see --help)",
                     argv[optind - 1]);
            return -1;
        }
        if (one(o, c, optarg, flag, err, errlen) < 0)
            return -1;
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return check_mode(o, err, errlen);
}
