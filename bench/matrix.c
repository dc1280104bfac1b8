/*
 * matrix: see matrix.h.
 */
#include "config.h"

#include "bench/matrix.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Starting conduitd (and nginx) and stopping it again, as measured here. */
#define START_STOP_S 5.0

/* "--FLAG ARG: WANT" into err; returns -1, for `return bad(...)`. */
static int
bad(char *err, size_t errlen, const char *flag, const char *arg, const char *want)
{
    snprintf(err, errlen, "--%s %s: %s", flag, arg ? arg : "", want);
    return -1;
}

/* A comma-separated list of whole numbers from lo to hi; the count or -1. */
static int
numbers(const char *spec, int lo, int hi, int *out, int max)
{
    char buf[256], *save = NULL;
    int n = 0;

    if (!spec || strlen(spec) >= sizeof(buf))
        return -1;
    strcpy(buf, spec);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(tok, &end, 10);

        if (end == tok || *end || v < lo || v > hi || n == max)
            return -1;
        for (int i = 0; i < n; i++)
            if (out[i] == v)
                return -1; /* a repeated item would play a configuration twice */
        out[n++] = (int)v;
    }
    return n ? n : -1;
}

/* "off,on" in any order, each once; the count or -1. */
static int
switches(const char *spec, int *out)
{
    char buf[64], *save = NULL;
    int n = 0;

    if (!spec || strlen(spec) >= sizeof(buf))
        return -1;
    strcpy(buf, spec);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int v = strcmp(tok, "on") == 0 ? 1 : strcmp(tok, "off") == 0 ? 0 : -1;

        if (v < 0 || n == 2 || (n == 1 && out[0] == v))
            return -1;
        out[n++] = v;
    }
    return n ? n : -1;
}

/* The items of the workers list, one per string, as the user wrote them. */
static int
items(const char *spec, char item[][16], int max)
{
    char buf[256], *save = NULL;
    int n = 0;

    if (strlen(spec) >= sizeof(buf))
        return -1;
    strcpy(buf, spec);
    for (char *tok = strtok_r(buf, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save))
        snprintf(item[n++], 16, "%s", tok);
    return n;
}

int
matrix_workers(const char *spec, int n, int *out, int max)
{
    char buf[256], *save = NULL, *tok;
    int count = 0;

    if (!spec || strlen(spec) >= sizeof(buf))
        return -1;
    strcpy(buf, spec);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        long k = 1, add = 0, v;
        char *p = tok, *end;

        if (count == max)
            return -1;
        if (strchr(p, 'n')) {
            if (*p != 'n') {
                k = strtol(p, &end, 10);
                if (end == p || *end != 'n' || k < 1 || k > 64)
                    return -1;
                p = end;
            }
            p++; /* the 'n' */
            if (*p == '+') {
                add = strtol(p + 1, &end, 10);
                if (end == p + 1 || *end || add < 0 || add > 1024)
                    return -1;
            } else if (*p) {
                return -1;
            }
            v = k * n + add;
        } else {
            v = strtol(p, &end, 10);
            if (end == p || *end)
                return -1;
        }
        if (v < 1 || v > 1024)
            return -1;
        out[count++] = (int)v;
    }
    return count ? count : -1;
}

int
matrix_expand(const char *cores, const char *workers, const char *instances, const char *cache,
              int ncpu, struct matrix_config *out, int max, char *err, size_t errlen)
{
    int c[16], in[16], ca[2], w[MATRIX_MAX_WORKERS], nc, ni, nca, nw, n = 0;
    char item[MATRIX_MAX_WORKERS][16];

    if ((nc = numbers(cores, 1, ncpu, c, 16)) < 0) {
        char want[96];

        snprintf(want, sizeof(want), "want distinct core counts from 1 to %d (this machine's)",
                 ncpu);
        return bad(err, errlen, "cores", cores, want);
    }
    if ((ni = numbers(instances, 1, 16, in, 16)) < 0)
        return bad(err, errlen, "instances", instances, "want distinct counts from 1 to 16");
    if ((nca = switches(cache, ca)) < 0)
        return bad(err, errlen, "cache", cache, "want off, on or off,on");
    for (int i = 0; i < nc; i++) {
        nw = matrix_workers(workers, c[i], w, MATRIX_MAX_WORKERS);
        if (nw < 0 || items(workers, item, MATRIX_MAX_WORKERS) != nw)
            return bad(err, errlen, "workers", workers,
                       "want a list such as 1,n,2n+1 (numbers, n, Kn, n+B, Kn+B)");
        for (int j = 0; j < nw; j++) {
            int dup = -1;

            /* 1 and n on one core: one configuration with both names. */
            for (int k = 0; k < j; k++)
                if (w[k] == w[j])
                    dup = k;
            for (int k = 0; k < ni; k++)
                for (int l = 0; l < nca; l++) {
                    struct matrix_config *m;

                    if (dup >= 0) {
                        for (int x = 0; x < n; x++) {
                            m = &out[x];
                            if (m->cores == c[i] && m->workers == w[j] && m->instances == in[k] &&
                                m->cache == ca[l] && !matrix_has_spec(m, item[j]) &&
                                strlen(m->spec) + strlen(item[j]) + 2 <= sizeof(m->spec))
                                strcat(strcat(m->spec, ","), item[j]);
                        }
                        continue;
                    }
                    if (n == max)
                        return bad(err, errlen, "workers", workers,
                                   "too many configurations (at most 64 in one experiment)");
                    m = &out[n++];
                    memset(m, 0, sizeof(*m));
                    m->cores = c[i];
                    m->workers = w[j];
                    m->instances = in[k];
                    m->cache = ca[l];
                    snprintf(m->spec, sizeof(m->spec), "%s", item[j]);
                    snprintf(m->label, sizeof(m->label), "c%d %dx%d cache-%s", c[i], in[k], w[j],
                             ca[l] ? "on" : "off");
                    snprintf(m->slug, sizeof(m->slug), "c%d-%dx%d-cache-%s", c[i], in[k], w[j],
                             ca[l] ? "on" : "off");
                }
        }
    }
    return n;
}

int
matrix_has_spec(const struct matrix_config *c, const char *item)
{
    size_t len = strlen(item);

    for (const char *p = c->spec; (p = strstr(p, item)); p += len)
        if ((p == c->spec || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return 0;
}

double
matrix_config_max_s(double ramp_s, double settle_s, double hold_s, double warmup_s, int max_levels)
{
    return START_STOP_S + (warmup_s > 0 ? ramp_s + warmup_s : 0) +
           (max_levels + 1) * (ramp_s + settle_s + hold_s);
}

int
matrix_fit_budget(double budget_s, int nconfigs, double ramp_s, double warmup_s, int max_levels,
                  int hold_given, int max_repeat, int *repeat, double *hold_s)
{
    static const double holds[] = {300, 180, 120, 60, 30, 20, 12, 8, 5};
    int nholds = (int)(sizeof(holds) / sizeof(holds[0]));
    double given = *hold_s;

    for (int r = max_repeat; r >= 1; r--)
        for (int h = 0; h < (hold_given ? 1 : nholds); h++) {
            double hold = hold_given ? given : holds[h];

            if (r * nconfigs * matrix_config_max_s(ramp_s, 1, hold, warmup_s, max_levels) <=
                budget_s) {
                *repeat = r;
                *hold_s = hold;
                return 0;
            }
        }
    *repeat = 1;
    *hold_s = hold_given ? given : holds[nholds - 1];
    return -1;
}
