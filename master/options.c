/*
 * options: command line parsing and config resolution.  See options.h.
 */
#include "config.h"

#include "master/options.h"

#include "common/jwt.h"

#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Long options that map one to one onto config keys. */
enum {
    OPT_PID = 256,
    OPT_USER,
    OPT_GROUP,
    OPT_ALLOW_ROOT,
    OPT_LOG,
    OPT_LOG_LEVEL,
    OPT_REUSEPORT,
    OPT_TIMEOUT,
    OPT_GRACEFUL_TIMEOUT,
    OPT_MAX_BODY_SIZE,
    OPT_MAX_HEADER_SIZE,
    OPT_IDLE_TIMEOUT,
    OPT_HEADER_TIMEOUT,
    OPT_SEND_TIMEOUT,
    OPT_MAX_CONNECTIONS,
    OPT_DB,
    OPT_POOL,
    OPT_POOL_QUEUE,
    OPT_CACHE,
    OPT_CACHE_SIZE,
    OPT_CACHE_SYNC,
    OPT_JWT_LIFETIME,
    OPT_BCRYPT_COST,
    OPT_BCRYPT_THREADS,
    OPT_DEV,
    OPT_INIT_DB,
};

static const struct option long_options[] = {
    {"workers", required_argument, NULL, 'w'},
    {"bind", required_argument, NULL, 'b'},
    {"config", required_argument, NULL, 'c'},
    {"daemonize", no_argument, NULL, 'd'},
    {"test-config", no_argument, NULL, 't'},
    {"signal", required_argument, NULL, 's'},
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},
    {"pid", required_argument, NULL, OPT_PID},
    {"user", required_argument, NULL, OPT_USER},
    {"group", required_argument, NULL, OPT_GROUP},
    {"allow-root", no_argument, NULL, OPT_ALLOW_ROOT},
    {"log", required_argument, NULL, OPT_LOG},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"reuseport", no_argument, NULL, OPT_REUSEPORT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"graceful-timeout", required_argument, NULL, OPT_GRACEFUL_TIMEOUT},
    {"max-body-size", required_argument, NULL, OPT_MAX_BODY_SIZE},
    {"max-header-size", required_argument, NULL, OPT_MAX_HEADER_SIZE},
    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
    {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
    {"send-timeout", required_argument, NULL, OPT_SEND_TIMEOUT},
    {"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
    {"db", required_argument, NULL, OPT_DB},
    {"pool", required_argument, NULL, OPT_POOL},
    {"pool-queue", required_argument, NULL, OPT_POOL_QUEUE},
    {"cache", required_argument, NULL, OPT_CACHE},
    {"cache-size", required_argument, NULL, OPT_CACHE_SIZE},
    {"cache-sync", required_argument, NULL, OPT_CACHE_SYNC},
    {"jwt-lifetime", required_argument, NULL, OPT_JWT_LIFETIME},
    {"bcrypt-cost", required_argument, NULL, OPT_BCRYPT_COST},
    {"bcrypt-threads", required_argument, NULL, OPT_BCRYPT_THREADS},
    {"dev", no_argument, NULL, OPT_DEV},
    {"init-db", no_argument, NULL, OPT_INIT_DB},
    {NULL, 0, NULL, 0},
};

/*
 * Which config key each flag sets.  A flag without a value (a boolean such
 * as --reuseport) sets "yes"; --cache and --cache-sync take on or off.
 */
static const struct {
    int opt;
    const char *key;
} flag_keys[] = {
    {'w', "workers"},
    {'b', "listen"},
    {'d', "daemonize"},
    {OPT_PID, "pid_file"},
    {OPT_USER, "user"},
    {OPT_GROUP, "group"},
    {OPT_ALLOW_ROOT, "allow_root"},
    {OPT_LOG, "log"},
    {OPT_LOG_LEVEL, "log_level"},
    {OPT_REUSEPORT, "reuseport"},
    {OPT_TIMEOUT, "timeout"},
    {OPT_GRACEFUL_TIMEOUT, "graceful_timeout"},
    {OPT_MAX_BODY_SIZE, "max_body_size"},
    {OPT_MAX_HEADER_SIZE, "max_header_size"},
    {OPT_IDLE_TIMEOUT, "idle_timeout"},
    {OPT_HEADER_TIMEOUT, "header_timeout"},
    {OPT_SEND_TIMEOUT, "send_timeout"},
    {OPT_MAX_CONNECTIONS, "max_connections"},
    {OPT_DB, "db"},
    {OPT_POOL, "pool"},
    {OPT_POOL_QUEUE, "pool_queue"},
    {OPT_CACHE, "cache"},
    {OPT_CACHE_SIZE, "cache_size"},
    {OPT_CACHE_SYNC, "cache_sync"},
    {OPT_JWT_LIFETIME, "jwt_lifetime"},
    {OPT_BCRYPT_COST, "bcrypt_cost"},
    {OPT_BCRYPT_THREADS, "bcrypt_threads"},
    {OPT_DEV, "dev"},
};

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int
set_string(char **slot, const char *value)
{
    free(*slot);
    return (*slot = strdup(value)) == NULL ? -1 : 0;
}

int
options_parse(struct options *o, int argc, char **argv, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->action = OPTIONS_RUN;
    /*
     * 0, not 1: only 0 makes glibc's getopt forget the previous argv (its
     * position inside a cluster such as "-dt"), so a second parse starts
     * clean instead of reading through pointers into the old argv.
     */
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":w:b:c:dts:Vh", long_options, NULL)) != -1) {
        switch (c) {
        case 'c':
            if (set_string(&o->config_file, optarg) < 0)
                goto oom;
            continue;
        case 't':
            o->action = OPTIONS_TEST;
            continue;
        case 's':
            if (options_signal_number(optarg) < 0) {
                seterr(err, errlen, "-s takes reload, stop, quit or reopen, not \"%s\"", optarg);
                return -1;
            }
            o->action = OPTIONS_SIGNAL;
            if (set_string(&o->signal_name, optarg) < 0)
                goto oom;
            continue;
        case 'V':
            o->action = OPTIONS_VERSION;
            continue;
        case 'h':
            o->action = OPTIONS_HELP;
            continue;
        case OPT_INIT_DB:
            o->action = OPTIONS_INIT_DB;
            continue;
        case ':':
            seterr(err, errlen, "option %s needs a value", argv[optind - 1]);
            return -1;
        case '?': {
            /*
             * For a long option optopt is 0 when the name is unknown, or
             * the option's value (not a printable letter for most) when it
             * was given "=value" but takes none.
             */
            const char *arg = argv[optind - 1];
            if (strncmp(arg, "--", 2) != 0)
                seterr(err, errlen, "unknown option -%c", optopt);
            else if (optopt != 0)
                seterr(err, errlen, "option %.*s takes no value", (int)strcspn(arg, "="), arg);
            else
                seterr(err, errlen, "unknown option %s", arg);
            return -1;
        }
        }
        const char *key = NULL;
        for (size_t i = 0; i < sizeof(flag_keys) / sizeof(flag_keys[0]); i++)
            if (flag_keys[i].opt == c)
                key = flag_keys[i].key;
        if (key == NULL) {
            seterr(err, errlen, "unhandled option");
            return -1;
        }
        if (o->noverrides >= OPTIONS_MAX_OVERRIDES) {
            seterr(err, errlen, "too many options");
            return -1;
        }
        const struct config_key *k = config_find(key);
        o->overrides[o->noverrides].key = k->name;
        o->overrides[o->noverrides].value = strdup(optarg != NULL ? optarg : "yes");
        if (o->overrides[o->noverrides].value == NULL)
            goto oom;
        o->noverrides++;
    }
    if (optind < argc) {
        seterr(err, errlen, "unexpected argument \"%s\"", argv[optind]);
        return -1;
    }
    return 0;
oom:
    seterr(err, errlen, "out of memory");
    return -1;
}

void
options_free(struct options *o)
{
    free(o->config_file);
    free(o->signal_name);
    for (int i = 0; i < o->noverrides; i++)
        free(o->overrides[i].value);
    memset(o, 0, sizeof(*o));
}

/*
 * A file that holds the JWT secret must not be open to every user: anyone
 * who reads the secret can sign a token for any account.  Refused (as ssh
 * refuses an exposed private key) rather than warned about, so that a
 * mistake cannot go unnoticed in a log.
 */
static int
secret_file_exposed(const char *path, char *err, size_t errlen)
{
    struct stat st;

    if (stat(path, &st) < 0 || !(st.st_mode & (S_IROTH | S_IWOTH)))
        return 0;
    seterr(err, errlen,
           "%s holds jwt_secret and is %s by every user: chmod o-rwx %s (or move the "
           "secret to CONDUITD_JWT_SECRET)",
           path, st.st_mode & S_IROTH ? "readable" : "writable", path);
    return -1;
}

int
options_resolve(const struct options *o, struct config *out, char *err, size_t errlen)
{
    struct config c;
    char reason[CONFIG_ERR_LEN];
    config_init(&c);

    if (o->config_file != NULL && config_load_file(&c, o->config_file, err, errlen) < 0)
        goto fail;
    if (o->config_file != NULL && c.jwt_secret != NULL &&
        secret_file_exposed(o->config_file, err, errlen) < 0)
        goto fail;

    const char *secret = getenv("CONDUITD_JWT_SECRET");
    /*
     * Length checked here too, so that the error names the variable: the
     * later check can only blame the config file.  -s never needs a secret.
     */
    if (secret != NULL && *secret != '\0' && o->action != OPTIONS_SIGNAL &&
        strlen(secret) < JWT_SECRET_MIN) {
        seterr(err, errlen, "CONDUITD_JWT_SECRET is shorter than %d bytes", JWT_SECRET_MIN);
        goto fail;
    }
    if (secret != NULL && *secret != '\0' &&
        config_set(&c, "jwt_secret", secret, 0, reason, sizeof(reason)) < 0) {
        seterr(err, errlen, "CONDUITD_JWT_SECRET: %s", reason);
        goto fail;
    }

    /*
     * Flags win.  A -b on the command line replaces the file's addresses
     * rather than adding to them: the flag says where to listen now.
     */
    int listen_seen = 0;
    for (int i = 0; i < o->noverrides; i++) {
        const struct config_key *k = config_find(o->overrides[i].key);
        int replace = k->type == CONFIG_LIST && !listen_seen;
        if (k->type == CONFIG_LIST)
            listen_seen = 1;
        if (config_set(&c, k->name, o->overrides[i].value, replace, reason, sizeof(reason)) < 0) {
            seterr(err, errlen, "command line: %s", reason);
            goto fail;
        }
    }

    if (c.dev && c.jwt_secret == NULL &&
        config_set(&c, "jwt_secret", CONFIG_DEV_JWT_SECRET, 0, reason, sizeof(reason)) < 0) {
        seterr(err, errlen, "%s", reason);
        goto fail;
    }

    /* -s only needs the pidfile: a missing secret must not stop "-s stop". */
    if (o->action != OPTIONS_SIGNAL && config_validate(&c, reason, sizeof(reason)) < 0) {
        if (o->config_file != NULL)
            seterr(err, errlen, "%s: %s", o->config_file, reason);
        else
            seterr(err, errlen, "%s", reason);
        goto fail;
    }
    *out = c;
    return 0;
fail:
    config_free(&c);
    return -1;
}

int
options_signal_number(const char *name)
{
    if (strcmp(name, "reload") == 0)
        return SIGHUP;
    if (strcmp(name, "stop") == 0)
        return SIGTERM;
    if (strcmp(name, "quit") == 0)
        return SIGQUIT;
    if (strcmp(name, "reopen") == 0)
        return SIGUSR1;
    return -1;
}

void
options_usage(FILE *out)
{
    fputs("usage: conduitd [options]\n"
          "\n"
          "actions:\n"
          "  -c, --config FILE       read settings from FILE (key = value)\n"
          "  -t, --test-config       check the configuration, print it, exit 0 or 1\n"
          "  -s, --signal SIGNAL     send reload, stop, quit or reopen to the running master\n"
          "      --init-db           apply the database schema and exit\n"
          "  -V, --version           print the version\n"
          "  -h, --help              this text\n"
          "\n"
          "settings (each also a config key; flags win over the file):\n"
          "  -w, --workers N|auto    worker processes (auto: one per core)\n"
          "  -b, --bind HOST:PORT    listen address, repeatable (127.0.0.1:8080)\n"
          "  -d, --daemonize         detach from the terminal\n"
          "      --pid FILE          write the master pid to FILE\n"
          "      --user USER         drop to USER after binding\n"
          "      --group GROUP       drop to GROUP after binding\n"
          "      --allow-root        let workers run as root when no --user is given\n"
          "      --log TARGET        stderr, syslog or a file (reopened on USR1)\n"
          "      --log-level LEVEL   debug, info, notice, warning, error (info)\n"
          "      --reuseport         one SO_REUSEPORT socket per worker\n"
          "      --timeout S         heartbeat timeout before SIGKILL (30)\n"
          "      --graceful-timeout S  time allowed to finish requests (30)\n"
          "      --max-body-size N   largest request body in bytes (1048576)\n"
          "      --max-header-size N largest header block in bytes (16384)\n"
          "      --idle-timeout S    keep-alive idle timeout (60)\n"
          "      --header-timeout S  time to send a whole request once begun (10)\n"
          "      --send-timeout S    time a reply may wait for the client to read on (60)\n"
          "      --max-connections N client connections per worker (10000)\n"
          "      --db CONNINFO       PostgreSQL connection string\n"
          "      --pool K            database connections per worker (4)\n"
          "      --pool-queue N      requests waiting for a connection per worker (1024)\n"
          "      --cache on|off      per-worker cache of users, profiles, tags (off)\n"
          "      --cache-size N      entries per worker cache (10000)\n"
          "      --cache-sync on|off coherence through LISTEN/NOTIFY (on)\n"
          "      --jwt-lifetime S    token lifetime in seconds (2592000)\n"
          "      --bcrypt-cost N     bcrypt cost (10)\n"
          "      --bcrypt-threads N  hashing threads per worker (2)\n"
          "      --dev               development mode: a fixed, public JWT secret\n"
          "\n"
          "The JWT secret comes from the config file (jwt_secret) or CONDUITD_JWT_SECRET,\n"
          "never from the command line.\n"
          "\n"
          "signals to the master: HUP reload, TERM graceful stop, INT/QUIT fast stop,\n"
          "TTIN/TTOU one worker more/fewer, USR1 reopen logs.\n",
          out);
}
