/*
 * settings: the settings of one generation of workers, and the one table that
 * describes them (name, type, bounds, default, reloadable), as Redis does.
 *
 * Every setting can come from the config file (key = value), from the
 * environment where noted, or from a command-line flag; flags win.  A reload
 * parses into a fresh struct config and swaps it in only when the whole
 * result is valid, so a bad file never half-applies.
 *
 * Ownership: a struct config owns every string it points to; config_free()
 * releases them, config_copy() deep-copies.
 */
#ifndef CONDUITD_SETTINGS_H
#define CONDUITD_SETTINGS_H

#include <stddef.h>
#include <stdio.h>

#define CONFIG_MAX_LISTEN 16
#define CONFIG_MAX_WORKERS 1024
#define CONFIG_ERR_LEN 512

/* Publicly known, so only ever used with dev = yes. */
#define CONFIG_DEV_JWT_SECRET "conduitd-development-secret-not-for-production-use"

struct config {
    int workers; /* 0 means auto: one per online core */
    char *listen[CONFIG_MAX_LISTEN];
    int nlisten;
    int listen_default; /* still the built-in address: the first one given replaces it */
    int daemonize;
    char *pid_file;
    char *user;
    char *group;
    int allow_root;
    char *log;
    int log_level;
    int reuseport;
    int timeout;
    int graceful_timeout;

    int max_body_size;
    int max_header_size;
    int idle_timeout;
    int header_timeout;
    int send_timeout;
    int max_connections;

    char *db;
    int pool;
    int pool_queue;
    int queue_timeout; /* milliseconds: a request waiting longer for a connection or a hash gets 503
                        */
    int queue_standing_timeout; /* milliseconds: the same, while a database queue stands; 0: off */

    char *db_read;       /* standbys for the GET routes (worker/replica.h); NULL: none */
    int db_read_max_lag; /* milliseconds */

    int cache;
    int cache_size;
    int cache_memory; /* megabytes */
    int cache_min_uses;
    int cache_stale_max; /* milliseconds; 0: never stale */
    int cache_sync;

    char *jwt_secret;
    int jwt_lifetime;
    int bcrypt_cost;
    int bcrypt_threads;
    int bcrypt_queue;
    int dev;

    char *cors_origin; /* NULL: no CORS; "*" or origins (common/cors.h) */

    char *access_log;      /* a file, "syslog" or "off" (worker/access_log.h) */
    int access_log_format; /* enum config_access_log_format */

    char *status_listen; /* HOST:PORT of /metrics and /status; NULL or "off": none */

    int max_requests;        /* 0: workers are not recycled */
    int max_requests_jitter; /* each worker's limit is max_requests + [0, jitter] */
};

enum config_type {
    CONFIG_INT,
    CONFIG_BOOL,
    CONFIG_STRING,
    CONFIG_LIST,
    CONFIG_ENUM, /* one of the key's values, kept as its index */
    CONFIG_WORKERS,
    CONFIG_MS /* a duration with its unit (250ms, 5s, 1min), kept in milliseconds */
};

/* access_log_format's values, in the order of its line in the table. */
enum config_access_log_format { CONFIG_ACCESS_LOG_COMBINED, CONFIG_ACCESS_LOG_JSON };

/*
 * A key's flags.  Every key says exactly one of CONFIG_RELOADABLE (HUP
 * applies a change) and CONFIG_RESTART (a change waits for the next start,
 * and HUP refuses it); the unit test checks that.
 */
#define CONFIG_RELOADABLE (1u << 0)
#define CONFIG_RESTART (1u << 1)
#define CONFIG_SECRET (1u << 2) /* never printed, never a flag */
/*
 * With CONFIG_RESTART: a HUP that changes it is not refused, it applies
 * the rest and keeps this key's running value (config_keep_running()),
 * as PostgreSQL does with shared_buffers.  For the sizes of what the
 * master maps once (the shared cache).
 */
#define CONFIG_KEEP (1u << 3)

/*
 * One setting, and everything about it: the parser, -t, reload, the
 * command-line flags and their usage text all come from this table
 * (master/options.c derives its long options, short flags and help from
 * it); the man pages, etc/conduitd.conf and the README's settings table
 * describe each key, and t/unit/test_master_options.c checks that every
 * key is in all four.  Written with designated initializers: a field left
 * out is 0 or NULL.
 */
struct config_key {
    const char *name;
    enum config_type type;
    const char *const *values; /* CONFIG_ENUM: the allowed words, NULL-terminated */
    size_t offset;
    long min, max;       /* bounds for integers */
    const char *defval;  /* as it would be written in the file; NULL = unset */
    unsigned flags;      /* CONFIG_RELOADABLE or CONFIG_RESTART, | CONFIG_SECRET */
    const char *help;    /* one line, for -h and the config file */
    const char *flag;    /* long option; NULL: the name with '-' for '_'; "": none */
    char short_flag;     /* 0: none */
    const char *argname; /* what -h shows after the flag; NULL: a switch, sets "yes" */
};

/* The long option of k ("--" not included) into buf; "" when it has none. */
const char *config_flag_name(const struct config_key *k, char *buf, size_t len);

extern const struct config_key config_keys[];
extern const size_t config_nkeys;

const struct config_key *config_find(const char *name);

/* Formats a reason into err (errlen bytes; nothing when err is NULL), for
 * the functions here and the master's options that answer -1 with one. */
void config_seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Fills in every default. */
void config_init(struct config *c);
void config_free(struct config *c);
int config_copy(struct config *dst, const struct config *src);

/*
 * Sets one key from its text form.  A list key appends; "replace" first
 * clears a list (a flag given on the command line replaces the file's list).
 * Returns 0, or -1 with a reason in err.
 */
int config_set(struct config *c, const char *key, const char *value, int replace, char *err,
               size_t errlen);

/* Parses a key = value file; err gets "FILE:LINE: reason". */
int config_load_file(struct config *c, const char *path, char *err, size_t errlen);

/* Parses text already in memory (the unit tests use it); name is for messages. */
int config_load_text(struct config *c, const char *name, const char *text, char *err,
                     size_t errlen);

/* Cross-key checks that only make sense once everything is read. */
int config_validate(const struct config *c, char *err, size_t errlen);

/* workers, with auto resolved to the number of online cores. */
int config_workers(const struct config *c);

/* Writes every setting as key = value, secrets masked (-t uses it). */
void config_print(const struct config *c, FILE *out);

/*
 * Is every non-reloadable key equal in both?  Names the first that
 * differs (CONFIG_KEEP keys aside: config_keep_running()).
 */
const char *config_nonreloadable_change(const struct config *a, const struct config *b);

/*
 * The CONFIG_KEEP keys whose value differs in next: set back to
 * running's, their names written to names (comma-separated); how many.
 */
int config_keep_running(const struct config *running, struct config *next, char *names, size_t len);

#endif
