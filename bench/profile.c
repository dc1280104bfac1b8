/*
 * profile: see profile.h.  Parsing walks the cJSON tree once and keeps
 * nothing of it; every error names the JSON path of the bad value.
 */
#include "config.h"

#include "bench/profile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/units.h"
#include "sql/queries.h"

const char *const prof_var_names[PV_COUNT] = {
    [PV_SLUG] = "slug",     [PV_ARTICLE] = "article", [PV_USER] = "user", [PV_USER_ID] = "user_id",
    [PV_TAG] = "tag",       [PV_OFFSET] = "offset",   [PV_ME] = "me",     [PV_EMAIL] = "email",
    [PV_VIEWER] = "viewer", [PV_MY_SLUG] = "my_slug", [PV_N] = "n",
};

struct parser {
    struct profile *p;
    char *err;
    size_t errlen;
};

static int
perr(struct parser *ps, const char *where, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(ps->err, ps->errlen, "%s: ", where);

    if (n < 0 || (size_t)n >= ps->errlen)
        return -1;
    va_start(ap, fmt);
    vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static void
tmpl_free(struct prof_tmpl *t)
{
    free(t->seg);
    free(t->src);
    memset(t, 0, sizeof(*t));
}

/* The variable named by s[0..n), or -1. */
static int
var_lookup(const char *s, size_t n)
{
    for (int i = 0; i < PV_COUNT; i++)
        if (strlen(prof_var_names[i]) == n && memcmp(prof_var_names[i], s, n) == 0)
            return i;
    return -1;
}

static int
tmpl_compile(struct parser *ps, const char *where, const char *text, struct prof_tmpl *t)
{
    size_t len = strlen(text), i = 0, lit = 0;

    memset(t, 0, sizeof(*t));
    t->src = strdup(text);
    /* At most one literal and one variable per "{": len + 1 segments suffice. */
    t->seg = calloc(len + 1, sizeof(*t->seg));
    if (!t->src || !t->seg)
        return perr(ps, where, "out of memory");
    while (i < len) {
        size_t j = i + 1;
        int v;

        if (text[i] != '{') {
            i++;
            continue;
        }
        while (j < len && ((text[j] >= 'a' && text[j] <= 'z') || text[j] == '_'))
            j++;
        if (j == i + 1 || j >= len || text[j] != '}') {
            i++; /* a literal brace, as in a JSON body */
            continue;
        }
        v = var_lookup(text + i + 1, j - i - 1);
        if (v < 0)
            return perr(ps, where, "unknown variable {%.*s}", (int)(j - i - 1), text + i + 1);
        if (i > lit)
            t->seg[t->nseg++] = (struct prof_seg){t->src + lit, i - lit, 0};
        t->seg[t->nseg++] = (struct prof_seg){NULL, 0, (enum prof_var)v};
        t->vars |= 1u << v;
        i = lit = j + 1;
    }
    if (len > lit)
        t->seg[t->nseg++] = (struct prof_seg){t->src + lit, len - lit, 0};
    return 0;
}

int
profile_expand(const struct prof_tmpl *t, const struct prof_values *vals, char *out, size_t cap)
{
    size_t n = 0;

    for (int i = 0; i < t->nseg; i++) {
        const struct prof_seg *s = &t->seg[i];
        const char *src = s->lit;
        size_t len = s->len;

        if (!src) {
            src = vals->v[s->var];
            if (!src)
                return -1;
            len = strlen(src);
        }
        if (n + len + 1 > cap)
            return -1;
        memcpy(out + n, src, len);
        n += len;
    }
    if (n + 1 > cap)
        return -1;
    out[n] = '\0';
    return (int)n;
}

/* A duration given as a number of seconds or a string with a unit. */
static int
get_duration(struct parser *ps, const cJSON *obj, const char *key, double def, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

    if (!v) {
        *out = def;
        return 0;
    }
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0) {
        *out = v->valuedouble;
        return 0;
    }
    if (cJSON_IsString(v) && units_duration(v->valuestring, out) == 0)
        return 0;
    return perr(ps, key, "want a duration (seconds, or a string such as \"7s\", \"15m\")");
}

static int
endpoint_index(struct parser *ps, const char *name)
{
    struct profile *p = ps->p;
    char **grown;

    for (int i = 0; i < p->nendpoints; i++)
        if (strcmp(p->endpoint[i], name) == 0)
            return i;
    grown = realloc(p->endpoint, (size_t)(p->nendpoints + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    p->endpoint = grown;
    if (!(p->endpoint[p->nendpoints] = strdup(name)))
        return -1;
    return p->nendpoints++;
}

static int
query_lookup(const char *name)
{
    for (int i = 0; i < SQL_QUERY_COUNT; i++)
        if (strcmp(sql_queries[i].name, name) == 0)
            return i;
    return -1;
}

static int
parse_sql(struct parser *ps, const char *where, const cJSON *js, struct prof_sql *sql)
{
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(js, "query");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(js, "params");
    const cJSON *it;
    char at[160];
    int i = 0;

    if (!cJSON_IsObject(js))
        return perr(ps, where, "want an object {\"query\": NAME, \"params\": [...]}");
    if (!cJSON_IsString(q))
        return perr(ps, where, "\"query\" must name a statement of sql/queries.sql");
    if ((sql->query = query_lookup(q->valuestring)) < 0)
        return perr(ps, where, "no statement named \"%s\" in sql/queries.sql", q->valuestring);
    if (params && !cJSON_IsArray(params))
        return perr(ps, where, "\"params\" must be an array of strings or nulls");
    sql->nparams = params ? cJSON_GetArraySize(params) : 0;
    if (sql->nparams != sql_queries[sql->query].nparams)
        return perr(ps, where, "%s takes %d parameter(s), %d given", q->valuestring,
                    sql_queries[sql->query].nparams, sql->nparams);
    if (sql->nparams > PROF_MAX_PARAMS)
        return perr(ps, where, "more than %d parameters", PROF_MAX_PARAMS);
    cJSON_ArrayForEach(it, params)
    {
        snprintf(at, sizeof(at), "%.100s.params[%d]", where, i);
        if (cJSON_IsNull(it))
            sql->is_null[i] = 1;
        else if (!cJSON_IsString(it))
            return perr(ps, at, "want a string template or null");
        else if (tmpl_compile(ps, at, it->valuestring, &sql->param[i]) < 0)
            return -1;
        i++;
    }
    return 0;
}

static int
parse_expect(struct parser *ps, const char *where, const cJSON *js, struct prof_request *r)
{
    const cJSON *it;

    if (!js) {
        r->expect[0] = strcmp(r->method, "POST") == 0 && r->capture == CAPTURE_SLUG ? 201 : 200;
        r->nexpect = 1;
        return 0;
    }
    if (cJSON_IsNumber(js)) {
        r->expect[r->nexpect++] = js->valueint;
    } else if (cJSON_IsArray(js) && cJSON_GetArraySize(js) > 0) {
        cJSON_ArrayForEach(it, js)
        {
            if (!cJSON_IsNumber(it) || r->nexpect == PROF_MAX_EXPECT)
                return perr(ps, where, "want at most %d status codes", PROF_MAX_EXPECT);
            r->expect[r->nexpect++] = it->valueint;
        }
    } else {
        return perr(ps, where, "want a status code or an array of them");
    }
    for (int i = 0; i < r->nexpect; i++)
        if (r->expect[i] < 100 || r->expect[i] > 599)
            return perr(ps, where, "%d is not an HTTP status", r->expect[i]);
    return 0;
}

static int
parse_request(struct parser *ps, const char *where, const cJSON *js, struct prof_request *r)
{
    static const char *const methods[] = {"GET", "POST", "PUT", "DELETE"};
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(js, "method");
    const cJSON *path = cJSON_GetObjectItemCaseSensitive(js, "path");
    const cJSON *body = cJSON_GetObjectItemCaseSensitive(js, "body");
    const cJSON *ep = cJSON_GetObjectItemCaseSensitive(js, "endpoint");
    const cJSON *cap = cJSON_GetObjectItemCaseSensitive(js, "capture");
    const cJSON *sql = cJSON_GetObjectItemCaseSensitive(js, "sql");
    char at[160], name[160];
    int ok = 0;

    r->sql.query = -1;
    if (!cJSON_IsObject(js))
        return perr(ps, where, "want an object with \"method\" and \"path\"");
    for (size_t i = 0; m && cJSON_IsString(m) && i < sizeof(methods) / sizeof(methods[0]); i++)
        ok |= strcmp(m->valuestring, methods[i]) == 0;
    snprintf(at, sizeof(at), "%.100s.method", where);
    if (!ok)
        return perr(ps, at, "must be one of GET, POST, PUT, DELETE");
    strcpy(r->method, m->valuestring);
    snprintf(at, sizeof(at), "%.100s.path", where);
    if (!cJSON_IsString(path) || path->valuestring[0] != '/')
        return perr(ps, at, "must be a string starting with /");
    if (strpbrk(path->valuestring, " \r\n"))
        return perr(ps, at, "must not contain spaces or line breaks");
    if (tmpl_compile(ps, at, path->valuestring, &r->path) < 0)
        return -1;
    snprintf(at, sizeof(at), "%.100s.body", where);
    if (body) {
        char *text = cJSON_IsString(body)   ? strdup(body->valuestring)
                     : cJSON_IsObject(body) ? cJSON_PrintUnformatted(body)
                                            : NULL;
        int rc;

        if (!text)
            return perr(ps, at, "want a JSON object or a string");
        rc = tmpl_compile(ps, at, text, &r->body);
        free(text);
        if (rc < 0)
            return -1;
    }
    snprintf(at, sizeof(at), "%.100s.capture", where);
    if (!cap)
        r->capture = CAPTURE_NONE;
    else if (cJSON_IsString(cap) && strcmp(cap->valuestring, "token") == 0)
        r->capture = CAPTURE_TOKEN;
    else if (cJSON_IsString(cap) && strcmp(cap->valuestring, "slug") == 0)
        r->capture = CAPTURE_SLUG;
    else
        return perr(ps, at, "must be \"token\" or \"slug\"");
    snprintf(at, sizeof(at), "%.100s.expect", where);
    if (parse_expect(ps, at, cJSON_GetObjectItemCaseSensitive(js, "expect"), r) < 0)
        return -1;
    /* The endpoint defaults to the method and the path before its query. */
    snprintf(at, sizeof(at), "%.100s.endpoint", where);
    if (ep && !cJSON_IsString(ep))
        return perr(ps, at, "must be a string");
    snprintf(name, sizeof(name), "%s %.*s", r->method, (int)strcspn(path->valuestring, "?"),
             path->valuestring);
    if ((r->endpoint = endpoint_index(ps, ep ? ep->valuestring : name)) < 0)
        return perr(ps, at, "out of memory");
    snprintf(at, sizeof(at), "%.100s.sql", where);
    if (sql && parse_sql(ps, at, sql, &r->sql) < 0)
        return -1;
    return 0;
}

static int
parse_requests(struct parser *ps, const char *where, const cJSON *js, struct prof_page *pg)
{
    const cJSON *it;
    char at[128];
    int i = 0;

    if (!cJSON_IsArray(js) || cJSON_GetArraySize(js) == 0)
        return perr(ps, where, "want a non-empty array of requests");
    pg->nreq = cJSON_GetArraySize(js);
    if (!(pg->req = calloc((size_t)pg->nreq, sizeof(*pg->req))))
        return perr(ps, where, "out of memory");
    cJSON_ArrayForEach(it, js)
    {
        snprintf(at, sizeof(at), "%.100s[%d]", where, i);
        if (parse_request(ps, at, it, &pg->req[i]) < 0)
            return -1;
        pg->vars |= pg->req[i].path.vars | pg->req[i].body.vars;
        for (int k = 0; k < pg->req[i].sql.nparams; k++)
            pg->vars |= pg->req[i].sql.param[k].vars;
        i++;
    }
    return 0;
}

static int
parse_page(struct parser *ps, int idx, const cJSON *js, struct prof_page *pg)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(js, "name");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(js, "weight");
    char at[128];

    snprintf(at, sizeof(at), "pages[%d]", idx);
    if (!cJSON_IsObject(js))
        return perr(ps, at, "want an object with \"name\", \"weight\" and \"requests\"");
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return perr(ps, at, "\"name\" must be a non-empty string");
    if (!(pg->name = strdup(name->valuestring)))
        return perr(ps, at, "out of memory");
    if (!cJSON_IsNumber(w) || !(w->valuedouble >= 0) || !isfinite(w->valuedouble))
        return perr(ps, at, "\"weight\" must be a number >= 0");
    pg->weight = w->valuedouble;
    pg->otherwise = -1;
    snprintf(at, sizeof(at), "pages[%d].requests", idx);
    return parse_requests(ps, at, cJSON_GetObjectItemCaseSensitive(js, "requests"), pg);
}

/* "needs": "my_slug" with "otherwise": PAGE, resolved once all pages are named. */
static int
parse_needs(struct parser *ps, int idx, const cJSON *js)
{
    struct profile *p = ps->p;
    const cJSON *needs = cJSON_GetObjectItemCaseSensitive(js, "needs");
    const cJSON *other = cJSON_GetObjectItemCaseSensitive(js, "otherwise");
    char at[128];

    snprintf(at, sizeof(at), "pages[%d]", idx);
    if (!needs)
        return other ? perr(ps, at, "\"otherwise\" without \"needs\"") : 0;
    if (!cJSON_IsString(needs) || strcmp(needs->valuestring, "my_slug") != 0)
        return perr(ps, at, "\"needs\" can only be \"my_slug\"");
    p->page[idx].needs_my_slug = 1;
    if (!cJSON_IsString(other))
        return perr(ps, at, "\"needs\" wants \"otherwise\": the name of another page");
    for (int i = 0; i < p->npages; i++)
        if (i != idx && !p->page[i].needs_my_slug &&
            strcmp(p->page[i].name, other->valuestring) == 0)
            p->page[idx].otherwise = i;
    if (p->page[idx].otherwise < 0)
        return perr(ps, at, "\"otherwise\": no page \"%s\" without \"needs\"", other->valuestring);
    return 0;
}

static int
check_vars(struct parser *ps, const struct prof_page *pg, const char *where)
{
    if ((pg->vars & (1u << PV_MY_SLUG)) && !pg->needs_my_slug)
        return perr(ps, where, "uses {my_slug} but has no \"needs\": \"my_slug\"");
    return 0;
}

static int
parse_root(struct parser *ps, const cJSON *root)
{
    struct profile *p = ps->p;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    const cJSON *pages = cJSON_GetObjectItemCaseSensitive(root, "pages");
    const cJSON *it;
    char at[64];
    int i = 0;

    if (!cJSON_IsObject(root))
        return perr(ps, "profile", "the top level must be an object");
    p->name = strdup(cJSON_IsString(name) ? name->valuestring : "unnamed");
    if (!p->name)
        return perr(ps, "profile", "out of memory");
    if (get_duration(ps, root, "think_mean", 7, &p->think_mean_s) < 0 ||
        get_duration(ps, root, "think_cap", 30, &p->think_cap_s) < 0 ||
        get_duration(ps, root, "session", 900, &p->session_s) < 0 ||
        get_duration(ps, root, "timeout", 10, &p->timeout_s) < 0)
        return -1;
    if (p->timeout_s <= 0)
        return perr(ps, "timeout", "must be above zero");
    if (p->think_cap_s < p->think_mean_s)
        return perr(ps, "think_cap", "is below think_mean");
    if (parse_requests(ps, "session_start", cJSON_GetObjectItemCaseSensitive(root, "session_start"),
                       &p->start) < 0)
        return -1;
    if (!(p->start.name = strdup("session start")))
        return perr(ps, "session_start", "out of memory");
    if (check_vars(ps, &p->start, "session_start") < 0)
        return -1;
    if (!cJSON_IsArray(pages) || cJSON_GetArraySize(pages) == 0)
        return perr(ps, "pages", "want a non-empty array of pages");
    p->npages = cJSON_GetArraySize(pages);
    if (!(p->page = calloc((size_t)p->npages, sizeof(*p->page))))
        return perr(ps, "pages", "out of memory");
    cJSON_ArrayForEach(it, pages)
    {
        if (parse_page(ps, i, it, &p->page[i]) < 0)
            return -1;
        p->total_weight += p->page[i].weight;
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(it, pages)
    {
        snprintf(at, sizeof(at), "pages[%d]", i);
        if (parse_needs(ps, i, it) < 0 || check_vars(ps, &p->page[i], at) < 0)
            return -1;
        i++;
    }
    if (!(p->total_weight > 0))
        return perr(ps, "pages", "the weights add up to zero");
    return 0;
}

/* Line and column of a position in the text, for JSON syntax errors. */
static void
position(const char *json, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (const char *s = json; s < at && *s; s++) {
        if (*s == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

struct profile *
profile_parse(const char *json, size_t len, char *err, size_t errlen)
{
    struct parser ps = {NULL, err, errlen};
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);

    if (!root) {
        int line, col;

        position(json, end ? end : cJSON_GetErrorPtr(), &line, &col);
        snprintf(err, errlen, "line %d, column %d: not valid JSON", line, col);
        return NULL;
    }
    ps.p = calloc(1, sizeof(*ps.p));
    if (!ps.p || parse_root(&ps, root) < 0) {
        if (!ps.p)
            snprintf(err, errlen, "out of memory");
        profile_free(ps.p);
        cJSON_Delete(root);
        return NULL;
    }
    cJSON_Delete(root);
    return ps.p;
}

struct profile *
profile_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL, msg[512];
    size_t len = 0, cap = 0, n;
    struct profile *p = NULL;

    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    do {
        if (len + 4096 > cap) {
            char *grown = realloc(text, cap = cap * 2 + 8192);

            if (!grown) {
                snprintf(err, errlen, "%s: out of memory", path);
                goto out;
            }
            text = grown;
        }
        n = fread(text + len, 1, cap - len, f);
        len += n;
    } while (n > 0 && len < (16u << 20));
    if (ferror(f)) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto out;
    }
    if (!(p = profile_parse(text, len, msg, sizeof(msg))))
        snprintf(err, errlen, "%s: %s", path, msg);
out:
    free(text);
    fclose(f);
    return p;
}

static void
page_free(struct prof_page *pg)
{
    for (int i = 0; pg->req && i < pg->nreq; i++) {
        struct prof_request *r = &pg->req[i];

        tmpl_free(&r->path);
        tmpl_free(&r->body);
        for (int k = 0; k < PROF_MAX_PARAMS; k++)
            tmpl_free(&r->sql.param[k]);
    }
    free(pg->req);
    free(pg->name);
}

void
profile_free(struct profile *p)
{
    if (!p)
        return;
    page_free(&p->start);
    for (int i = 0; p->page && i < p->npages; i++)
        page_free(&p->page[i]);
    free(p->page);
    for (int i = 0; i < p->nendpoints; i++)
        free(p->endpoint[i]);
    free(p->endpoint);
    free(p->name);
    free(p);
}

int
profile_pick(const struct profile *p, double u)
{
    double x = u * p->total_weight;

    for (int i = 0; i < p->npages; i++) {
        if (x < p->page[i].weight)
            return i;
        x -= p->page[i].weight;
    }
    /* Rounding at the very top: the last page with any weight. */
    for (int i = p->npages - 1; i > 0; i--)
        if (p->page[i].weight > 0)
            return i;
    return 0;
}

double
profile_think_mean(const struct profile *p)
{
    if (p->think_mean_s <= 0)
        return 0;
    return p->think_mean_s * (1 - exp(-p->think_cap_s / p->think_mean_s));
}

const struct prof_request *
profile_pick_request(const struct profile *p, double u1, double u2)
{
    double total = 0, x;
    int i;

    for (i = 0; i < p->npages; i++)
        total += p->page[i].weight * p->page[i].nreq;
    x = u1 * total;
    for (i = 0; i < p->npages - 1; i++) {
        double w = p->page[i].weight * p->page[i].nreq;

        if (x < w)
            break;
        x -= w;
    }
    if (p->page[i].needs_my_slug)
        i = p->page[i].otherwise;
    return &p->page[i].req[(int)(u2 * p->page[i].nreq) % p->page[i].nreq];
}

int
profile_expected(const struct prof_request *r, int status)
{
    for (int i = 0; i < r->nexpect; i++)
        if (r->expect[i] == status)
            return 1;
    return 0;
}
