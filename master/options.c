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

/*
 * The actions: what to do rather than a setting.  Every setting's flag
 * comes from the config table (common/settings.c): its long option, its
 * short letter and its line in -h, so that a new setting is one line there.
 */
enum { OPT_INIT_DB = 256, OPT_KEY_BASE = 512 /* + the key's index in config_keys */ };

static const struct option action_options[] = {
    {"config", required_argument, NULL, 'c'}, {"test-config", no_argument, NULL, 't'},
    {"signal", required_argument, NULL, 's'}, {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},         {"init-db", no_argument, NULL, OPT_INIT_DB},
};
#define NACTIONS (sizeof(action_options) / sizeof(action_options[0]))
#define MAX_KEYS 64
#define FLAG_LEN 32

/* getopt's tables, built from the config table on first use. */
static struct {
    struct option longopts[NACTIONS + MAX_KEYS + 1];
    char names[MAX_KEYS][FLAG_LEN];
    char shortopts[3 * MAX_KEYS + 16];
    int built;
} G;

static void
build_options(void)
{
    size_t n = 0, sn;

    if (G.built)
        return;
    memcpy(G.longopts, action_options, sizeof(action_options));
    n = NACTIONS;
    sn = (size_t)snprintf(G.shortopts, sizeof(G.shortopts), ":c:ts:Vh");
    for (size_t i = 0; i < config_nkeys && i < MAX_KEYS; i++) {
        const struct config_key *k = &config_keys[i];
        if (!*config_flag_name(k, G.names[i], FLAG_LEN))
            continue;
        G.longopts[n++] = (struct option){G.names[i], k->argname ? required_argument : no_argument,
                                          NULL, OPT_KEY_BASE + (int)i};
        if (k->short_flag) {
            G.shortopts[sn++] = k->short_flag;
            if (k->argname)
                G.shortopts[sn++] = ':';
        }
    }
    G.shortopts[sn] = '\0';
    memset(&G.longopts[n], 0, sizeof(G.longopts[n]));
    G.built = 1;
}

/* The key a flag sets (its getopt value), or NULL. */
static const struct config_key *
key_of_option(int c)
{
    if (c >= OPT_KEY_BASE && (size_t)(c - OPT_KEY_BASE) < config_nkeys)
        return &config_keys[c - OPT_KEY_BASE];
    for (size_t i = 0; c > 0 && c < 128 && i < config_nkeys; i++)
        if (config_keys[i].short_flag == c)
            return &config_keys[i];
    return NULL;
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
    build_options();
    int c;
    while ((c = getopt_long(argc, argv, G.shortopts, G.longopts, NULL)) != -1) {
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
                config_seterr(err, errlen,
                              "-s takes reload, stop, quit, reopen or upgrade, not \"%s\"", optarg);
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
            config_seterr(err, errlen, "option %s needs a value", argv[optind - 1]);
            return -1;
        case '?': {
            /*
             * For a long option optopt is 0 when the name is unknown, or
             * the option's value (not a printable letter for most) when it
             * was given "=value" but takes none.
             */
            const char *arg = argv[optind - 1];
            if (strncmp(arg, "--", 2) != 0)
                config_seterr(err, errlen, "unknown option -%c", optopt);
            else if (optopt != 0)
                config_seterr(err, errlen, "option %.*s takes no value", (int)strcspn(arg, "="),
                              arg);
            else
                config_seterr(err, errlen, "unknown option %s", arg);
            return -1;
        }
        }
        const struct config_key *k = key_of_option(c);
        if (k == NULL) {
            config_seterr(err, errlen, "unhandled option");
            return -1;
        }
        if (o->noverrides >= OPTIONS_MAX_OVERRIDES) {
            config_seterr(err, errlen, "too many options");
            return -1;
        }
        o->overrides[o->noverrides].key = k->name;
        o->overrides[o->noverrides].value = strdup(optarg != NULL ? optarg : "yes");
        if (o->overrides[o->noverrides].value == NULL)
            goto oom;
        o->noverrides++;
    }
    if (optind < argc) {
        config_seterr(err, errlen, "unexpected argument \"%s\"", argv[optind]);
        return -1;
    }
    return 0;
oom:
    config_seterr(err, errlen, "out of memory");
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
    config_seterr(err, errlen,
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
        config_seterr(err, errlen, "CONDUITD_JWT_SECRET is shorter than %d bytes", JWT_SECRET_MIN);
        goto fail;
    }
    if (secret != NULL && *secret != '\0' &&
        config_set(&c, "jwt_secret", secret, 0, reason, sizeof(reason)) < 0) {
        config_seterr(err, errlen, "CONDUITD_JWT_SECRET: %s", reason);
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
            config_seterr(err, errlen, "command line: %s", reason);
            goto fail;
        }
    }

    if (c.dev && c.jwt_secret == NULL &&
        config_set(&c, "jwt_secret", CONFIG_DEV_JWT_SECRET, 0, reason, sizeof(reason)) < 0) {
        config_seterr(err, errlen, "%s", reason);
        goto fail;
    }

    /* -s only needs the pidfile: a missing secret must not stop "-s stop". */
    if (o->action != OPTIONS_SIGNAL && config_validate(&c, reason, sizeof(reason)) < 0) {
        if (o->config_file != NULL)
            config_seterr(err, errlen, "%s: %s", o->config_file, reason);
        else
            config_seterr(err, errlen, "%s", reason);
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
    if (strcmp(name, "upgrade") == 0)
        return SIGUSR2; /* and the checked sequence of upgrade_cmd.c around it */
    return -1;
}

void
options_usage(FILE *out)
{
    fputs("usage: conduitd [options]\n"
          "\n"
          "actions:\n"
          "  -c, --config FILE         read settings from FILE (key = value)\n"
          "  -t, --test-config         check the configuration as a start would, print it\n"
          "  -s, --signal SIGNAL       send reload, stop, quit or reopen to the running master;\n"
          "                            upgrade: start the binary anew in its place, checked\n"
          "      --init-db             apply the database schema and exit\n"
          "  -V, --version             print the version\n"
          "  -h, --help                this text\n"
          "\n"
          "settings (each also a config key; flags win over the file; default in brackets):\n",
          out);
    for (size_t i = 0; i < config_nkeys; i++) {
        const struct config_key *k = &config_keys[i];
        char name[FLAG_LEN], left[64];
        if (!*config_flag_name(k, name, sizeof(name)))
            continue;
        snprintf(left, sizeof(left), "--%s%s%s", name, k->argname ? " " : "",
                 k->argname ? k->argname : "");
        if (k->short_flag)
            fprintf(out, "  -%c, %-22s %s", k->short_flag, left, k->help);
        else
            fprintf(out, "      %-22s %s", left, k->help);
        if (k->defval && *k->defval && k->argname)
            fprintf(out, " [%s]", k->defval);
        fputc('\n', out);
    }
    fputs("\n"
          "The JWT secret comes from the config file (jwt_secret) or CONDUITD_JWT_SECRET,\n"
          "never from the command line.\n"
          "\n"
          "signals to the master: HUP reload, TERM graceful stop, INT/QUIT fast stop,\n"
          "TTIN/TTOU one worker more/fewer, USR1 reopen logs, USR2 start a new binary\n"
          "(upgrade), WINCH retire the workers of the old master during an upgrade.\n",
          out);
}
