/*
 * parts: see parts.h.
 */
#include "config.h"

#include "seed/parts.h"

#include <stdlib.h>
#include <string.h>

#define MARKER "\n-- @@ post-load"
#define BANNER "-- ===="

static int
starts(const char *line, const char *prefix)
{
    while (*prefix)
        if (*line++ != *prefix++)
            return 0;
    return 1;
}

static const char *
next_line(const char *s)
{
    const char *nl = strchr(s, '\n');

    return nl ? nl + 1 : s + strlen(s);
}

/* Copies the identifier at s (letters, digits, '_') into out. */
static void
ident(const char *s, char *out)
{
    size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");

    if (n >= PARTS_NAME_MAX)
        n = PARTS_NAME_MAX - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

/* The names after "CREATE TABLE " and "CREATE FUNCTION " at line starts. */
static int
names(struct parts *p)
{
    for (const char *l = p->pre; *l; l = next_line(l)) {
        if (starts(l, "CREATE TABLE ")) {
            if (p->ntables == PARTS_MAX_NAMES)
                return -1;
            ident(l + strlen("CREATE TABLE "), p->tables[p->ntables++]);
        } else if (starts(l, "CREATE FUNCTION ")) {
            if (p->nfunctions == PARTS_MAX_NAMES)
                return -1;
            ident(l + strlen("CREATE FUNCTION "), p->functions[p->nfunctions++]);
        }
    }
    return 0;
}

/* A banner starts at l: a rule, a title, a rule. */
static int
banner(const char *l, const char **title)
{
    const char *t = next_line(l);

    if (!starts(l, BANNER) || !starts(t, "-- ") || !starts(next_line(t), BANNER))
        return 0;
    *title = t + 3;
    return 1;
}

static int
add_section(struct parts *p, const char *title, const char *from, const char *to)
{
    struct parts_section *s;
    size_t n;

    if (p->nsections == PARTS_MAX_SECTIONS)
        return -1;
    s = &p->sections[p->nsections];
    if (!(s->sql = strndup(from, (size_t)(to - from))))
        return -1;
    n = strcspn(title, "(\n");
    while (n > 0 && title[n - 1] == ' ')
        n--;
    if (n >= PARTS_NAME_MAX)
        n = PARTS_NAME_MAX - 1;
    memcpy(s->name, title, n);
    s->name[n] = '\0';
    p->nsections++;
    return 0;
}

int
parts_split(struct parts *p, const char *schema)
{
    const char *m = strstr(schema, MARKER), *post, *from, *title = NULL, *t;

    memset(p, 0, sizeof(*p));
    if (!m)
        return -1;
    post = m + 1;
    if (!(p->pre = strndup(schema, (size_t)(post - schema))) || names(p) < 0)
        goto fail;
    /* The comments before the first banner go with the first section. */
    from = post;
    for (const char *l = post; *l; l = next_line(l)) {
        if (!banner(l, &t))
            continue;
        if (title) {
            if (add_section(p, title, from, l) < 0)
                goto fail;
            from = l;
        }
        title = t;
        l = next_line(next_line(l));
    }
    if (add_section(p, title ? title : "post-load", from, from + strlen(from)) < 0)
        goto fail;
    return 0;
fail:
    parts_free(p);
    return -1;
}

void
parts_free(struct parts *p)
{
    free(p->pre);
    for (int i = 0; i < p->nsections; i++)
        free(p->sections[i].sql);
    memset(p, 0, sizeof(*p));
}
