/*
 * settings: the settings table and its parser.  See settings.h.
 */
#include "config.h"

#include "common/settings.h"
#include "common/cors.h"
#include "common/jwt.h"
#include "common/log.h"

#include <ctype.h>
#include <stdarg.h>
#include <strings.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OFF(field) offsetof(struct config, field)

/*
 * The one table, one block a key.  Adding a setting means adding a field to
 * struct config, a block here, its paragraph in man/conduitd.conf.5.in (and
 * its flag in man/conduitd.8.in), its line in etc/conduitd.conf and its row
 * in the README's settings table; -t, the parser, the flags, -h and reload
 * all follow from the block here.
 */
const struct config_key config_keys[] = {
    {
        .name = "workers",
        .type = CONFIG_WORKERS,
        .offset = OFF(workers),
        .min = 1,
        .max = CONFIG_MAX_WORKERS,
        .defval = "auto",
        .flags = CONFIG_RELOADABLE,
        .help = "worker processes: a number or auto (one per online core)",
        .short_flag = 'w',
        .argname = "N|auto",
    },
    {
        .name = "listen",
        .type = CONFIG_LIST,
        .offset = OFF(listen),
        .defval = "127.0.0.1:8080",
        .flags = CONFIG_RELOADABLE,
        .help = "HOST:PORT to listen on; repeat for several",
        .flag = "bind",
        .short_flag = 'b',
        .argname = "HOST:PORT",
    },
    {
        .name = "daemonize",
        .type = CONFIG_BOOL,
        .offset = OFF(daemonize),
        .defval = "no",
        .flags = CONFIG_RESTART,
        .help = "detach from the terminal",
        .short_flag = 'd',
    },
    {
        .name = "pid_file",
        .type = CONFIG_STRING,
        .offset = OFF(pid_file),
        .flags = CONFIG_RESTART,
        .help = "where to write the master pid",
        .flag = "pid",
        .argname = "FILE",
    },
    {
        .name = "user",
        .type = CONFIG_STRING,
        .offset = OFF(user),
        .flags = CONFIG_RESTART,
        .help = "drop to this user after binding",
        .argname = "USER",
    },
    {
        .name = "group",
        .type = CONFIG_STRING,
        .offset = OFF(group),
        .flags = CONFIG_RESTART,
        .help = "drop to this group after binding",
        .argname = "GROUP",
    },
    {
        .name = "allow_root",
        .type = CONFIG_BOOL,
        .offset = OFF(allow_root),
        .defval = "no",
        .flags = CONFIG_RESTART,
        .help = "let workers run as root when no user is set",
    },
    {
        .name = "log",
        .type = CONFIG_STRING,
        .offset = OFF(log),
        .defval = "stderr",
        .flags = CONFIG_RELOADABLE,
        .help = "stderr, syslog or a file path",
        .argname = "TARGET",
    },
    {
        .name = "log_level",
        .type = CONFIG_ENUM,
        .values = (const char *const[]){"debug", "info", "notice", "warning", "error", NULL},
        .offset = OFF(log_level),
        .defval = "info",
        .flags = CONFIG_RELOADABLE,
        .help = "debug, info, notice, warning or error",
        .argname = "LEVEL",
    },
    {
        .name = "access_log",
        .type = CONFIG_STRING,
        .offset = OFF(access_log),
        .defval = "off",
        .flags = CONFIG_RELOADABLE,
        .help = "one line per request: a file (reopened on USR1), syslog, or off",
        .argname = "TARGET",
    },
    {
        .name = "access_log_format",
        .type = CONFIG_ENUM,
        .values = (const char *const[]){"combined", "json", NULL},
        .offset = OFF(access_log_format),
        .defval = "combined",
        .flags = CONFIG_RELOADABLE,
        .help = "combined (with request and database time) or json",
        .argname = "FORMAT",
    },
    {
        .name = "status_listen",
        .type = CONFIG_STRING,
        .offset = OFF(status_listen),
        .defval = "off",
        .flags = CONFIG_RESTART,
        .help = "HOST:PORT for /metrics (Prometheus) and /status; loopback or private only",
        .argname = "HOST:PORT",
    },
    {
        .name = "reuseport",
        .type = CONFIG_BOOL,
        .offset = OFF(reuseport),
        .defval = "no",
        .flags = CONFIG_RELOADABLE,
        .help = "each worker opens its own SO_REUSEPORT socket",
    },
    {
        .name = "timeout",
        .type = CONFIG_INT,
        .offset = OFF(timeout),
        .min = 1,
        .max = 3600,
        .defval = "30",
        .flags = CONFIG_RELOADABLE,
        .help = "seconds without a heartbeat before a worker is killed",
        .argname = "S",
    },
    {
        .name = "graceful_timeout",
        .type = CONFIG_INT,
        .offset = OFF(graceful_timeout),
        .min = 1,
        .max = 3600,
        .defval = "30",
        .flags = CONFIG_RELOADABLE,
        .help = "seconds a retiring worker may take to finish its requests",
        .argname = "S",
    },
    {
        .name = "max_body_size",
        .type = CONFIG_INT,
        .offset = OFF(max_body_size),
        .min = 1024,
        .max = 1L << 30,
        .defval = "1048576",
        .flags = CONFIG_RELOADABLE,
        .help = "largest request body in bytes (413 beyond)",
        .argname = "N",
    },
    {
        .name = "max_header_size",
        .type = CONFIG_INT,
        .offset = OFF(max_header_size),
        .min = 1024,
        .max = 1L << 20,
        .defval = "16384",
        .flags = CONFIG_RELOADABLE,
        .help = "largest request header block in bytes",
        .argname = "N",
    },
    {
        .name = "idle_timeout",
        .type = CONFIG_INT,
        .offset = OFF(idle_timeout),
        .min = 1,
        .max = 3600,
        .defval = "60",
        .flags = CONFIG_RELOADABLE,
        .help = "seconds a keep-alive connection may stay idle",
        .argname = "S",
    },
    {
        .name = "header_timeout",
        .type = CONFIG_INT,
        .offset = OFF(header_timeout),
        .min = 1,
        .max = 3600,
        .defval = "10",
        .flags = CONFIG_RELOADABLE,
        .help = "seconds a client has to send a whole request once it has begun (slowloris)",
        .argname = "S",
    },
    {
        .name = "send_timeout",
        .type = CONFIG_INT,
        .offset = OFF(send_timeout),
        .min = 1,
        .max = 3600,
        .defval = "60",
        .flags = CONFIG_RELOADABLE,
        .help = "seconds a reply may wait for its client to take the next byte (slow readers)",
        .argname = "S",
    },
    {
        .name = "max_connections",
        .type = CONFIG_INT,
        .offset = OFF(max_connections),
        .min = 1,
        .max = 1000000,
        .defval = "10000",
        .flags = CONFIG_RELOADABLE,
        .help = "client connections one worker holds at most (accepts pause beyond)",
        .argname = "N",
    },
    {
        .name = "db",
        .type = CONFIG_STRING,
        .offset = OFF(db),
        .flags = CONFIG_RELOADABLE,
        .help = "PostgreSQL connection string (default: DATABASE_URL, then the PG* variables)",
        .argname = "CONNINFO",
    },
    {
        .name = "pool",
        .type = CONFIG_INT,
        .offset = OFF(pool),
        .min = 1,
        .max = 256,
        .defval = "4",
        .flags = CONFIG_RELOADABLE,
        .help = "database connections per worker",
        .argname = "K",
    },
    {
        .name = "pool_queue",
        .type = CONFIG_INT,
        .offset = OFF(pool_queue),
        .min = 0,
        .max = 100000,
        .defval = "1024",
        .flags = CONFIG_RELOADABLE,
        .help = "requests that may wait for a connection per worker (503 beyond)",
        .argname = "N",
    },
    {
        .name = "queue_timeout",
        .type = CONFIG_MS,
        .offset = OFF(queue_timeout),
        .min = 1,
        .max = 3600000,
        .defval = "1s",
        .flags = CONFIG_RELOADABLE,
        .help = "longest a request waits for a database connection or a hashing thread (503 "
                "beyond: its client has given up by then)",
        .argname = "DURATION",
    },
    {
        .name = "queue_standing_timeout",
        .type = CONFIG_MS,
        .offset = OFF(queue_standing_timeout),
        .min = 0,
        .max = 3600000,
        .defval = "250ms",
        .flags = CONFIG_RELOADABLE,
        .help = "while a database queue stands (its oldest request waiting over 100 ms for "
                "500 ms: an overload), newest first and a request waits at most this (0: off)",
        .argname = "DURATION",
    },
    {
        .name = "db_read",
        .type = CONFIG_STRING,
        .offset = OFF(db_read),
        .flags = CONFIG_RELOADABLE,
        .help = "standbys for the GET routes: a connection string (target_session_attrs=standby "
                "unless it says otherwise)",
        .argname = "CONNINFO",
    },
    {
        .name = "db_read_max_lag",
        .type = CONFIG_MS,
        .offset = OFF(db_read_max_lag),
        .min = 100,
        .max = 3600000,
        .defval = "5s",
        .flags = CONFIG_RELOADABLE,
        .help =
            "a standby further behind the primary is skipped until it catches up (250ms, 5s, 1min)",
        .argname = "DURATION",
    },
    {
        .name = "cache",
        .type = CONFIG_BOOL,
        .offset = OFF(cache),
        .defval = "off",
        .flags = CONFIG_RELOADABLE,
        .help = "the instance's cache of the reads, shared by its workers (users, profiles, "
                "articles, list "
                "pages, the tag list)",
        .argname = "on|off",
    },
    {
        .name = "cache_size",
        .type = CONFIG_INT,
        .offset = OFF(cache_size),
        .min = 16,
        .max = 10000000,
        .defval = "200000",
        .flags = CONFIG_RESTART | CONFIG_KEEP,
        .help = "entries the instance's cache may hold (least recently used go first)",
        .argname = "N",
    },
    {
        .name = "cache_memory",
        .type = CONFIG_INT,
        .offset = OFF(cache_memory),
        .min = 1,
        .max = 1048576,
        .defval = "64",
        .flags = CONFIG_RESTART | CONFIG_KEEP,
        .help =
            "megabytes the instance's cache may hold, shared by its workers (least recently used "
            "go first)",
        .argname = "MB",
    },
    {
        .name = "cache_min_uses",
        .type = CONFIG_INT,
        .offset = OFF(cache_min_uses),
        .min = 1,
        .max = 100,
        .defval = "1",
        .flags = CONFIG_RELOADABLE,
        .help = "store a value only once it was read from the database this many times lately",
        .argname = "N",
    },
    {
        .name = "cache_stale_max",
        .type = CONFIG_MS,
        .offset = OFF(cache_stale_max),
        .min = 0,
        .max = 60000,
        .defval = "1s",
        .flags = CONFIG_RELOADABLE,
        .help = "while the database is backed up, a cached value being refreshed may be answered "
                "this long after it changed, never to its writer (0: never stale)",
        .argname = "DURATION",
    },
    {
        .name = "cache_sync",
        .type = CONFIG_BOOL,
        .offset = OFF(cache_sync),
        .defval = "on",
        .flags = CONFIG_RELOADABLE,
        .help = "keep caches coherent through PostgreSQL LISTEN/NOTIFY (off: a static deployment)",
        .argname = "on|off",
    },
    {
        .name = "jwt_secret",
        .type = CONFIG_STRING,
        .offset = OFF(jwt_secret),
        .flags = CONFIG_RELOADABLE | CONFIG_SECRET,
        .help = "HS256 key shared by every worker and instance, at least 32 bytes",
        .flag = "",
    },
    {
        .name = "jwt_lifetime",
        .type = CONFIG_INT,
        .offset = OFF(jwt_lifetime),
        .min = 60,
        .max = JWT_LIFETIME_MAX,
        .defval = "2592000",
        .flags = CONFIG_RELOADABLE,
        .help = "seconds a token stays valid",
        .argname = "S",
    },
    {
        .name = "bcrypt_cost",
        .type = CONFIG_INT,
        .offset = OFF(bcrypt_cost),
        .min = 4,
        .max = 31,
        .defval = "10",
        .flags = CONFIG_RELOADABLE,
        .help = "bcrypt cost of new hashes",
        .argname = "N",
    },
    {
        .name = "bcrypt_threads",
        .type = CONFIG_INT,
        .offset = OFF(bcrypt_threads),
        .min = 1,
        .max = 64,
        .defval = "2",
        .flags = CONFIG_RELOADABLE,
        .help = "password hashing threads per worker",
        .argname = "N",
    },
    {
        .name = "bcrypt_queue",
        .type = CONFIG_INT,
        .offset = OFF(bcrypt_queue),
        .min = 0,
        .max = 100000,
        .defval = "64",
        .flags = CONFIG_RELOADABLE,
        .help = "hashes (logins, registrations) that may wait for a thread per worker (503 beyond)",
        .argname = "N",
    },
    {
        .name = "dev",
        .type = CONFIG_BOOL,
        .offset = OFF(dev),
        .defval = "no",
        .flags = CONFIG_RELOADABLE,
        .help = "development mode: a fixed, public JWT secret",
    },
    {
        .name = "cors_origin",
        .type = CONFIG_STRING,
        .offset = OFF(cors_origin),
        .flags = CONFIG_RELOADABLE,
        .help = "origins a browser may call the API from: * or exact origins (off)",
        .argname = "LIST",
    },
    {
        .name = "max_requests",
        .type = CONFIG_INT,
        .offset = OFF(max_requests),
        .min = 0,
        .max = 1000000000,
        .defval = "0",
        .flags = CONFIG_RELOADABLE,
        .help = "responses after which a worker is replaced, gracefully (0: never)",
        .argname = "N",
    },
    {
        .name = "max_requests_jitter",
        .type = CONFIG_INT,
        .offset = OFF(max_requests_jitter),
        .min = 0,
        .max = 1000000000,
        .defval = "0",
        .flags = CONFIG_RELOADABLE,
        .help = "a random 0..N more for each worker, so they are not replaced at once",
        .argname = "N",
    },
};

const size_t config_nkeys = sizeof(config_keys) / sizeof(config_keys[0]);

const char *
config_flag_name(const struct config_key *k, char *buf, size_t len)
{
    const char *src = k->flag ? k->flag : k->name;
    size_t i = 0;

    if ((k->flags & CONFIG_SECRET) || (k->flag && !*k->flag)) {
        if (len > 0)
            buf[0] = '\0';
        return buf;
    }
    for (; src[i] && i + 1 < len; i++)
        buf[i] = src[i] == '_' ? '-' : src[i];
    if (len > 0)
        buf[i] = '\0';
    return buf;
}

void
config_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err != NULL && errlen > 0)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const struct config_key *
config_find(const char *name)
{
    for (size_t i = 0; i < config_nkeys; i++)
        if (strcmp(config_keys[i].name, name) == 0)
            return &config_keys[i];
    return NULL;
}

#define FIELD(c, k, type) ((type *)((char *)(c) + (k)->offset))

static void
list_clear(struct config *c)
{
    for (int i = 0; i < c->nlisten; i++) {
        free(c->listen[i]);
        c->listen[i] = NULL;
    }
    c->nlisten = 0;
}

static int
parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"yes", "on", "true", "1"};
    static const char *const no[] = {"no", "off", "false", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return *out = 1, 0;
        if (strcasecmp(v, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

static int
parse_long(const char *v, long *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno != 0 || end == v || *end != '\0')
        return -1;
    *out = n;
    return 0;
}

/*
 * A whole number and its unit, as PostgreSQL writes durations: ms, s or
 * min.  The unit is required: a bare 5 could mean either.
 */
static int
parse_ms(const char *v, long *out)
{
    static const struct {
        const char *unit;
        long ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"min", 60000}};
    char *end;
    long n;

    if (*v < '0' || *v > '9')
        return -1;
    errno = 0;
    n = strtol(v, &end, 10);
    if (errno != 0)
        return -1;
    /* Nothing lasts no time in any unit: a bare 0 needs none (nginx's rule). */
    if (n == 0 && *end == '\0') {
        *out = 0;
        return 0;
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].unit) == 0) {
            if (n > LONG_MAX / units[i].ms)
                return -1;
            *out = n * units[i].ms;
            return 0;
        }
    }
    return -1;
}

/* HOST:PORT, [V6]:PORT; the port is required so that a typo cannot bind 80. */
static int
valid_address(const char *v)
{
    const char *colon;
    if (v[0] == '[') {
        const char *close = strchr(v, ']');
        if (close == NULL || close[1] != ':' || close == v + 1)
            return 0;
        colon = close + 1;
    } else {
        colon = strrchr(v, ':');
        if (colon == NULL || colon == v || memchr(v, ':', (size_t)(colon - v)) != NULL)
            return 0;
    }
    long port;
    if (parse_long(colon + 1, &port) < 0 || port < 0 || port > 65535)
        return 0;
    return 1;
}

/* "KEY: "VALUE" is not a, b or c", the words of an enum key. */
static void
enum_error(const struct config_key *k, const char *value, char *err, size_t errlen)
{
    char words[256] = "";
    size_t len = 0;

    for (int i = 0; k->values[i] != NULL && len < sizeof(words); i++) {
        const char *sep = i == 0 ? "" : k->values[i + 1] == NULL ? " or " : ", ";
        int n = snprintf(words + len, sizeof(words) - len, "%s%s", sep, k->values[i]);
        if (n < 0)
            break;
        len += (size_t)n;
    }
    config_seterr(err, errlen, "%s: \"%s\" is not %s", k->name, value, words);
}

int
config_set(struct config *c, const char *key, const char *value, int replace, char *err,
           size_t errlen)
{
    const struct config_key *k = config_find(key);
    if (k == NULL) {
        config_seterr(err, errlen, "unknown key \"%s\"", key);
        return -1;
    }
    long n;
    switch (k->type) {
    case CONFIG_WORKERS:
        if (strcmp(value, "auto") == 0) {
            *FIELD(c, k, int) = 0;
            return 0;
        }
        /* otherwise a number */
        __attribute__((fallthrough));
    case CONFIG_INT:
        if (parse_long(value, &n) < 0) {
            config_seterr(err, errlen, "%s: \"%s\" is not a whole number", key, value);
            return -1;
        }
        if (n < k->min || n > k->max) {
            config_seterr(err, errlen, "%s: %ld is out of range (%ld to %ld)", key, n, k->min,
                          k->max);
            return -1;
        }
        *FIELD(c, k, int) = (int)n;
        return 0;
    case CONFIG_MS:
        if (parse_ms(value, &n) < 0) {
            config_seterr(err, errlen, "%s: \"%s\" is not a duration (250ms, 5s, 1min)", key,
                          value);
            return -1;
        }
        if (n < k->min || n > k->max) {
            config_seterr(err, errlen, "%s: %s is out of range (%ldms to %ldms)", key, value,
                          k->min, k->max);
            return -1;
        }
        *FIELD(c, k, int) = (int)n;
        return 0;
    case CONFIG_BOOL:
        if (parse_bool(value, FIELD(c, k, int)) < 0) {
            config_seterr(err, errlen, "%s: \"%s\" is not yes or no", key, value);
            return -1;
        }
        return 0;
    case CONFIG_ENUM:
        for (int i = 0; k->values[i] != NULL; i++) {
            if (strcmp(value, k->values[i]) == 0) {
                *FIELD(c, k, int) = i;
                return 0;
            }
        }
        enum_error(k, value, err, errlen);
        return -1;
    case CONFIG_STRING: {
        char **slot = FIELD(c, k, char *);
        char *copy = strdup(value);
        if (copy == NULL) {
            config_seterr(err, errlen, "out of memory");
            return -1;
        }
        free(*slot);
        *slot = copy;
        return 0;
    }
    case CONFIG_LIST:
        if (!valid_address(value)) {
            config_seterr(err, errlen, "%s: \"%s\" is not HOST:PORT", key, value);
            return -1;
        }
        if (replace || c->listen_default)
            list_clear(c);
        c->listen_default = 0;
        /*
         * The second bind of one address would fail at start or on reload
         * (or, with reuseport, silently double it).  Port 0 is exempt: each
         * such line is its own free port.
         */
        for (int i = 0; i < c->nlisten; i++) {
            long port;
            if (parse_long(strrchr(value, ':') + 1, &port) == 0 && port != 0 &&
                strcmp(c->listen[i], value) == 0) {
                config_seterr(err, errlen, "%s: \"%s\" is given twice", key, value);
                return -1;
            }
        }
        if (c->nlisten >= CONFIG_MAX_LISTEN) {
            config_seterr(err, errlen, "%s: more than %d addresses", key, CONFIG_MAX_LISTEN);
            return -1;
        }
        if ((c->listen[c->nlisten] = strdup(value)) == NULL) {
            config_seterr(err, errlen, "out of memory");
            return -1;
        }
        c->nlisten++;
        return 0;
    }
    config_seterr(err, errlen, "%s: unhandled type", key);
    return -1;
}

void
config_init(struct config *c)
{
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (k->defval == NULL)
            continue;
        char err[CONFIG_ERR_LEN];
        if (config_set(c, k->name, k->defval, 0, err, sizeof(err)) < 0)
            fatal("bad default in the config table: %s", err);
    }
    /* The first address a file or flag names replaces the default one. */
    c->listen_default = 1;
}

void
config_free(struct config *c)
{
    list_clear(c);
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (k->type == CONFIG_STRING) {
            char **slot = FIELD(c, k, char *);
            free(*slot);
            *slot = NULL;
        }
    }
}

int
config_copy(struct config *dst, const struct config *src)
{
    *dst = *src;
    int n = src->nlisten;
    for (int i = 0; i < n; i++)
        dst->listen[i] = NULL;
    for (size_t i = 0; i < config_nkeys; i++)
        if (config_keys[i].type == CONFIG_STRING)
            *FIELD(dst, &config_keys[i], char *) = NULL;
    for (int i = 0; i < n; i++)
        if ((dst->listen[i] = strdup(src->listen[i])) == NULL)
            goto fail;
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (k->type != CONFIG_STRING)
            continue;
        const char *s = *FIELD(src, k, char *const);
        if (s != NULL && (*FIELD(dst, k, char *) = strdup(s)) == NULL)
            goto fail;
    }
    return 0;
fail:
    config_free(dst);
    return -1;
}

static char *
trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1]))
        *--end = '\0';
    return s;
}

/* Blanks only, or blanks and then a comment: what may follow a value. */
static int
rest_is_blank(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return *p == '\0' || *p == '#';
}

/*
 * One line: blank, "# comment", or "key = value", optionally followed by
 * "# comment".  A comment starts at a '#' that begins the value or follows
 * a blank, so "a#b" stays one value.  A value may be written in double
 * quotes to keep leading or trailing spaces or a '#': it ends at the first
 * '"' that only blanks or a comment follow, so there are no escapes and a
 * value can still hold a '"'.
 */
static int
parse_line(struct config *c, char *line, char *err, size_t errlen)
{
    char *s = trim(line);
    if (*s == '\0' || *s == '#')
        return 0;
    char *eq = strchr(s, '=');
    if (eq == NULL) {
        config_seterr(err, errlen, "expected key = value, found \"%.40s\"", s);
        return -1;
    }
    *eq = '\0';
    char *key = trim(s);
    char *value = trim(eq + 1);
    if (*key == '\0') {
        config_seterr(err, errlen, "missing key before '='");
        return -1;
    }
    if (*value == '"') {
        char *close = strchr(value + 1, '"');
        while (close != NULL && !rest_is_blank(close + 1))
            close = strchr(close + 1, '"');
        if (close == NULL) {
            config_seterr(err, errlen, "%s: %s", key,
                          strchr(value + 1, '"') ? "text after the closing quote"
                                                 : "unterminated quoted value");
            return -1;
        }
        *close = '\0';
        value++;
    } else {
        for (char *p = value; *p != '\0'; p++) {
            if (*p == '#' && (p == value || isspace((unsigned char)p[-1]))) {
                *p = '\0';
                break;
            }
        }
        value = trim(value);
    }
    if (*value == '\0') {
        config_seterr(err, errlen, "%s: empty value", key);
        return -1;
    }
    return config_set(c, key, value, 0, err, errlen);
}

int
config_load_text(struct config *c, const char *name, const char *text, char *err, size_t errlen)
{
    int lineno = 0;
    const char *p = text;
    while (*p != '\0') {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        lineno++;
        char line[4096];
        if (len >= sizeof(line)) {
            config_seterr(err, errlen, "%s:%d: line too long", name, lineno);
            return -1;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        if (memchr(p, '\0', len) != NULL || strlen(line) != len) {
            config_seterr(err, errlen, "%s:%d: NUL byte in line", name, lineno);
            return -1;
        }
        char reason[CONFIG_ERR_LEN];
        if (parse_line(c, line, reason, sizeof(reason)) < 0) {
            config_seterr(err, errlen, "%s:%d: %s", name, lineno, reason);
            return -1;
        }
        p += len;
        if (*p == '\n')
            p++;
    }
    return 0;
}

int
config_load_file(struct config *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        config_seterr(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* Config files are small; a megabyte is a mistake, not a config. */
    char *text = NULL;
    size_t len = 0, cap = 0;
    int rc = -1;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            if (cap > (1u << 20)) {
                config_seterr(err, errlen, "%s: larger than 1 MiB", path);
                goto out;
            }
            char *grown = realloc(text, cap);
            if (grown == NULL) {
                config_seterr(err, errlen, "%s: out of memory", path);
                goto out;
            }
            text = grown;
        }
        size_t n = fread(text + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0)
            break;
    }
    if (ferror(f)) {
        config_seterr(err, errlen, "%s: read error", path);
        goto out;
    }
    text[len] = '\0';
    if (strlen(text) != len) {
        /* find the line of the NUL for the message */
        int lineno = 1;
        for (size_t i = 0; i < len && text[i] != '\0'; i++)
            lineno += text[i] == '\n';
        config_seterr(err, errlen, "%s:%d: NUL byte in line", path, lineno);
        goto out;
    }
    rc = config_load_text(c, path, text, err, errlen);
out:
    free(text);
    fclose(f);
    return rc;
}

/* The port of a HOST:PORT that valid_address() accepted. */
static long
address_port(const char *v)
{
    long port = -1;

    parse_long(strrchr(v, ':') + 1, &port);
    return port;
}

/*
 * status_listen: off, or an address of its own.  On an address the API
 * listens on, the bind would fail at start (or, with reuseport, share the
 * port); said here so that -t says it too.
 */
static int
check_status_listen(const struct config *c, char *err, size_t errlen)
{
    const char *v = c->status_listen;
    long port;

    if (!v || strcmp(v, "off") == 0)
        return 0;
    if (!valid_address(v)) {
        config_seterr(err, errlen, "status_listen: \"%s\" is not HOST:PORT or off", v);
        return -1;
    }
    port = address_port(v);
    for (int i = 0; i < c->nlisten && port != 0; i++) {
        if (address_port(c->listen[i]) == port) {
            config_seterr(err, errlen,
                          "status_listen %s: the API listens on port %ld (listen = %s); the status "
                          "page needs a port of its own",
                          v, port, c->listen[i]);
            return -1;
        }
    }
    return 0;
}

int
config_validate(const struct config *c, char *err, size_t errlen)
{
    if (c->group != NULL && c->user == NULL) {
        config_seterr(err, errlen, "group is set but user is not");
        return -1;
    }
    if (!c->dev) {
        if (c->jwt_secret == NULL) {
            config_seterr(err, errlen,
                          "no jwt_secret: set it in the config file or CONDUITD_JWT_SECRET "
                          "(or use --dev for a development secret)");
            return -1;
        }
    }
    if (c->jwt_secret != NULL && strlen(c->jwt_secret) < JWT_SECRET_MIN) {
        config_seterr(err, errlen, "jwt_secret is shorter than %d bytes", JWT_SECRET_MIN);
        return -1;
    }
    if (check_status_listen(c, err, errlen) < 0)
        return -1;
    const char *why = cors_check_list(c->cors_origin);
    if (why) {
        config_seterr(err, errlen, "cors_origin \"%s\": %s", c->cors_origin, why);
        return -1;
    }
    return 0;
}

int
config_workers(const struct config *c)
{
    if (c->workers > 0)
        return c->workers;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > CONFIG_MAX_WORKERS)
        n = CONFIG_MAX_WORKERS;
    return (int)n;
}

void
config_print(const struct config *c, FILE *out)
{
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        switch (k->type) {
        case CONFIG_WORKERS:
            if (c->workers == 0)
                fprintf(out, "%s = auto (%d)\n", k->name, config_workers(c));
            else
                fprintf(out, "%s = %d\n", k->name, c->workers);
            break;
        case CONFIG_INT:
            fprintf(out, "%s = %d\n", k->name, *FIELD(c, k, const int));
            break;
        case CONFIG_MS:
            fprintf(out, "%s = %dms\n", k->name, *FIELD(c, k, const int));
            break;
        case CONFIG_BOOL:
            fprintf(out, "%s = %s\n", k->name, *FIELD(c, k, const int) ? "yes" : "no");
            break;
        case CONFIG_ENUM:
            fprintf(out, "%s = %s\n", k->name, k->values[*FIELD(c, k, const int)]);
            break;
        case CONFIG_STRING: {
            const char *s = *FIELD(c, k, char *const);
            if (s == NULL)
                fprintf(out, "# %s is not set\n", k->name);
            else if (k->flags & CONFIG_SECRET)
                fprintf(out, "%s = (set, %zu bytes, not shown)\n", k->name, strlen(s));
            else
                fprintf(out, "%s = %s\n", k->name, s);
            break;
        }
        case CONFIG_LIST: {
            for (int j = 0; j < c->nlisten; j++)
                fprintf(out, "%s = %s\n", k->name, c->listen[j]);
            break;
        }
        }
    }
}

static int
same_string(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return strcmp(a, b) == 0;
}

const char *
config_nonreloadable_change(const struct config *a, const struct config *b)
{
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        if (!(k->flags & CONFIG_RESTART) || (k->flags & CONFIG_KEEP))
            continue;
        switch (k->type) {
        case CONFIG_STRING:
            if (!same_string(*FIELD(a, k, char *const), *FIELD(b, k, char *const)))
                return k->name;
            break;
        case CONFIG_LIST:
            break; /* no list is non-reloadable */
        default:
            if (*FIELD(a, k, const int) != *FIELD(b, k, const int))
                return k->name;
        }
    }
    return NULL;
}

int
config_keep_running(const struct config *running, struct config *next, char *names, size_t len)
{
    int n = 0;
    size_t used = 0;

    if (len)
        names[0] = '\0';
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        int *to;
        if (!(k->flags & CONFIG_KEEP))
            continue;
        /* Integers only: what sizes a mapping. */
        to = FIELD(next, k, int);
        if (*to == *FIELD(running, k, const int))
            continue;
        *to = *FIELD(running, k, const int);
        if (used < len) {
            int w = snprintf(names + used, len - used, "%s%s", n ? ", " : "", k->name);
            used += w > 0 ? (size_t)w : 0;
        }
        n++;
    }
    return n;
}
