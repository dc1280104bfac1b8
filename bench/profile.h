/*
 * profile: the page mix a virtual user plays, read from a JSON file (the
 * default one is bench/profiles/default.json, docs/workload.md's table).
 *
 * A profile names its timings (think time, session length, timeout), the
 * requests that open a session (log in, read the user), and weighted pages
 * of one or more requests sent in order.  Paths, bodies and SQL parameters
 * are templates: "{slug}" and the other names of enum prof_var are filled
 * in by the virtual user from the dataset's naming scheme, so nothing is
 * asked of the database.  A "{" not followed by a lower-case name and "}"
 * is literal, so JSON bodies need no escaping.
 *
 * Each request may name the SQL statement the server runs for it
 * (sql/queries.sql) with its parameters: `conduit-bench ceiling` replays
 * that mix straight through libpq.
 *
 * Ownership: profile_load returns one allocation tree owned by the caller
 * and freed by profile_free; nothing points into the JSON text.
 */
#ifndef CONDUIT_BENCH_PROFILE_H
#define CONDUIT_BENCH_PROFILE_H

#include <stddef.h>
#include <stdint.h>

/* The template variables; prof_var_names[] spells them. */
enum prof_var {
    PV_SLUG,    /* a random seeded article's slug, one per page */
    PV_ARTICLE, /* that article's id */
    PV_USER,    /* a random seeded user's name (never the caller), one per page */
    PV_USER_ID, /* that user's id */
    PV_TAG,     /* a random tag name, one per page */
    PV_OFFSET,  /* 10 * k, k uniform in 1..20, one per page */
    PV_ME,      /* the caller's username */
    PV_EMAIL,   /* the caller's email */
    PV_VIEWER,  /* the caller's user id */
    PV_MY_SLUG, /* the slug of the last article the caller wrote this session */
    PV_N,       /* a number unique within the run */
    PV_COUNT
};
extern const char *const prof_var_names[PV_COUNT];

/* A template compiled into literal pieces and variables. */
struct prof_seg {
    const char *lit; /* NULL for a variable */
    size_t len;
    enum prof_var var;
};
struct prof_tmpl {
    char *src; /* the template's text; literals point into it */
    struct prof_seg *seg;
    int nseg;
    uint32_t vars; /* bit (1 << var) for each variable used */
};

enum prof_capture { CAPTURE_NONE, CAPTURE_TOKEN, CAPTURE_SLUG };

#define PROF_MAX_EXPECT 4
#define PROF_MAX_PARAMS 8

struct prof_sql {
    int query; /* enum sql_query_id, or -1 when the request names none */
    int nparams;
    struct prof_tmpl param[PROF_MAX_PARAMS];
    int is_null[PROF_MAX_PARAMS];
};

struct prof_request {
    char method[8];
    struct prof_tmpl path;
    struct prof_tmpl body; /* nseg 0: no body */
    int endpoint;          /* index into profile.endpoints */
    int expect[PROF_MAX_EXPECT];
    int nexpect;
    enum prof_capture capture;
    struct prof_sql sql;
};

struct prof_page {
    char *name;
    double weight;
    struct prof_request *req;
    int nreq;
    int needs_my_slug; /* played only once the caller wrote an article ... */
    int otherwise;     /* ... else this page (index) instead */
    uint32_t vars;     /* union of its requests' variables */
};

struct profile {
    char *name;
    double think_mean_s, think_cap_s, session_s, timeout_s;
    struct prof_page start; /* the session's first requests */
    struct prof_page *page;
    int npages;
    double total_weight;
    char **endpoint;
    int nendpoints;
};

/*
 * Parses a profile.  On error returns NULL and writes a message that names
 * the place ("pages[3].requests[0].method: ...") into err.
 */
struct profile *profile_parse(const char *json, size_t len, char *err, size_t errlen);
/* Reads and parses a file; the message starts with the file name. */
struct profile *profile_load(const char *path, char *err, size_t errlen);
void profile_free(struct profile *p);

/* The page for a uniform draw u in [0, 1). */
int profile_pick(const struct profile *p, double u);

/*
 * One request of the mix, for the modes that send requests, not pages
 * (open loop, SQL ceiling): a page is drawn with its weight times its
 * number of requests, then one of them, so each request comes as often as
 * virtual users send it.  Pages that need {my_slug} give way to their
 * "otherwise" page.
 */
const struct prof_request *profile_pick_request(const struct profile *p, double u1, double u2);

/* Whether the profile expects this status from the request. */
int profile_expected(const struct prof_request *r, int status);

/* Values for the variables, filled by the caller for the ones it uses. */
struct prof_values {
    const char *v[PV_COUNT];
};

/*
 * Expands t into out (cap bytes, NUL-terminated); returns the length, or
 * -1 when it does not fit or a variable it uses has no value.
 */
int profile_expand(const struct prof_tmpl *t, const struct prof_values *vals, char *out,
                   size_t cap);

/* The expected mean of the think time, exponential capped: m (1 - e^(-cap/m)). */
double profile_think_mean(const struct profile *p);

#endif
