/*
 * probe: see probe.h.
 */
#include "config.h"

#include "bench/probe.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/httpc.h"

/* Where the bisection for the likely scale stops: scale 100. */
#define MAX_USERS 10000000LL

struct target {
    const struct sockaddr_in *server;
    const char *host;
    double timeout_s;
    int *asked;
    char err[128];
};

int
probe_needed(const struct profile *p)
{
    const uint32_t seeded = 1u << PV_SLUG | 1u << PV_ARTICLE | 1u << PV_USER | 1u << PV_USER_ID |
                            1u << PV_ME | 1u << PV_EMAIL | 1u << PV_VIEWER;

    for (int g = -1; g < p->npages; g++) {
        const struct prof_page *pg = g < 0 ? &p->start : &p->page[g];

        for (int i = 0; i < pg->nreq; i++)
            if ((pg->req[i].path.vars | pg->req[i].body.vars) & seeded)
                return 1;
    }
    return 0;
}

/* One request on its own connection; the status, or -1 (t->err says why). */
static int
ask(struct target *t, const char *method, const char *path, const char *body)
{
    char req[1024], buf[8192];
    struct timeval tv = {(time_t)t->timeout_s, 0};
    struct httpc p;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), n, status = -1;
    const char *why = NULL;

    if (fd < 0) {
        snprintf(t->err, sizeof(t->err), "socket: %s", strerror(errno));
        return -1;
    }
    (*t->asked)++;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    n = snprintf(req, sizeof(req),
                 "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n"
                 "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                 method, path, t->host, body ? strlen(body) : 0, body ? body : "");
    if (connect(fd, (const struct sockaddr *)t->server, sizeof(*t->server)) < 0 ||
        send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        snprintf(t->err, sizeof(t->err), "%s", strerror(errno));
        close(fd);
        return -1;
    }
    httpc_init(&p);
    for (;;) {
        ssize_t got = recv(fd, buf, sizeof(buf), 0);
        size_t used;
        enum httpc_rc rc;

        if (got <= 0) {
            snprintf(t->err, sizeof(t->err), "%s",
                     got == 0 ? "connection closed before the response ended" : strerror(errno));
            break;
        }
        rc = httpc_feed(&p, buf, (size_t)got, &used, NULL, &why);
        if (rc == HTTPC_DONE) {
            status = p.status;
            break;
        }
        if (rc == HTTPC_ERROR) {
            snprintf(t->err, sizeof(t->err), "%s", why ? why : "bad response");
            break;
        }
    }
    close(fd);
    return status;
}

static int
login(struct target *t, const struct dataset *ds, int64_t user, char *email, size_t cap)
{
    char body[256];

    dataset_email(ds, user, email, cap);
    snprintf(body, sizeof(body), "{\"user\":{\"email\":\"%s\",\"password\":\"%s\"}}", email,
             DATASET_PASSWORD);
    return ask(t, "POST", "/api/users/login", body);
}

static int
profile_status(struct target *t, const struct dataset *big, int64_t user, char *name, size_t cap)
{
    char path[128];

    dataset_username(big, user, name, cap);
    snprintf(path, sizeof(path), "/api/profiles/%s", name);
    return ask(t, "GET", path, NULL);
}

static int
article_status(struct target *t, const struct dataset *big, int64_t article, char *slug, size_t cap)
{
    char path[DATASET_SLUG_MAX + 32];

    dataset_slug(big, article, slug, cap);
    snprintf(path, sizeof(path), "/api/articles/%s", slug);
    return ask(t, "GET", path, NULL);
}

/* The number of seeded users the server has: users 1..n answer, n + 1 does not. */
static int64_t
seeded_users(struct target *t, const struct dataset *big)
{
    char name[DATASET_NAME_MAX];
    int64_t lo = 1, hi = 2;

    /* Gallop up to a user that is missing, then bisect. */
    while (hi <= MAX_USERS && profile_status(t, big, hi, name, sizeof(name)) == 200) {
        lo = hi;
        hi *= 2;
    }
    if (hi > MAX_USERS)
        return lo;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;

        if (profile_status(t, big, mid, name, sizeof(name)) == 200)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int
probe_dataset(const struct sockaddr_in *server, const char *host, const struct dataset *ds,
              double timeout_s, int *asked, char *msg, size_t cap)
{
    struct target t = {server, host, timeout_s, asked, ""};
    struct dataset big;
    char what[384], name[DATASET_NAME_MAX + 16];
    int st;

    dataset_init(&big, 100, ds->seed);
    st = login(&t, ds, 1, name, sizeof(name));
    if (st < 0) {
        snprintf(msg, cap, "cannot ask %s whether it holds the dataset: %s", host, t.err);
        return -2;
    }
    if (st != 200) {
        snprintf(msg, cap,
                 "user 1 (%s) cannot log in (status %d): the server holds no dataset of --seed "
                 "%" PRIu64 " (another --seed, or none at all: see conduit-seed)",
                 name, st, ds->seed);
        return -1;
    }
    if ((st = login(&t, ds, ds->users, name, sizeof(name))) != 200)
        snprintf(what, sizeof(what),
                 "user %" PRId64 " (%s) cannot log in (status %d): the server holds fewer users "
                 "than --scale %g",
                 ds->users, name, st, ds->scale);
    else if ((st = profile_status(&t, &big, ds->users + 1, name, sizeof(name))) == 200)
        snprintf(what, sizeof(what),
                 "user %" PRId64 " (%s) exists: the server holds more users than --scale %g",
                 ds->users + 1, name, ds->scale);
    else if ((st = article_status(&t, &big, ds->articles, name, sizeof(name))) != 200)
        snprintf(what, sizeof(what),
                 "article %" PRId64 " (%s) is not found (status %d): the server holds fewer "
                 "articles than --scale %g",
                 ds->articles, name, st, ds->scale);
    else if ((st = article_status(&t, &big, ds->articles + 1, name, sizeof(name))) == 200)
        snprintf(what, sizeof(what),
                 "article %" PRId64 " (%s) exists: the server holds more articles than --scale %g",
                 ds->articles + 1, name, ds->scale);
    else
        return 0;
    {
        int64_t n = seeded_users(&t, &big);

        snprintf(msg, cap,
                 "%s; it has %" PRId64 " seeded users, so it looks seeded at --scale %g (give "
                 "that, or --no-probe to run anyway)",
                 what, n, (double)n / 100000);
    }
    return -1;
}
