/*
 * findings: see findings.h.
 */
#include "config.h"

#include "bench/findings.h"

#include <string.h>

#include "bench/units.h"

double
findings_server_mb(const struct exp_row *r)
{
    return r->pss_mb[AG_SERVER] + r->pss_mb[AG_NGINX];
}

int
findings_usable(const struct exp_row *r)
{
    return r->users > 0 && !r->disturbed && !r->pin_failed;
}

int
findings_merge(const struct exp_row *reps, int k, struct exp_row *out)
{
    int order[SPREAD_MAX] = {0}, m = 0, dl = 0, dist = 0, pin = 0;

    if (k > SPREAD_MAX)
        k = SPREAD_MAX;
    for (int i = 0; i < k; i++)
        order[i] = i;
    for (int i = 1; i < k; i++) /* a few repeats: insertion sort by users */
        for (int j = i; j > 0 && reps[order[j - 1]].users > reps[order[j]].users; j--) {
            int t = order[j];

            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    m = k ? order[(k - 1) / 2] : 0;
    for (int i = 0; i < k; i++) {
        dl += reps[i].disturbed_levels;
        dist |= reps[i].disturbed;
        pin |= reps[i].pin_failed;
    }
    *out = reps[m];
    out->nrep = k;
    for (int i = 0; i < k; i++) {
        out->rep_users[i] = reps[i].users;
        out->rep_rps[i] = reps[i].rps;
        out->rep_pss_mb[i] = findings_server_mb(&reps[i]);
        for (int g = 0; g < AG_NGROUPS; g++)
            out->rep_us[g][i] = reps[i].us_per_req[g];
    }
    out->disturbed_levels = dl;
    out->disturbed = dist;
    out->pin_failed = pin;
    return m;
}

/* The users of every repeat, or the one search's. */
static const double *
users_of(const struct exp_row *r, int *n, double *one)
{
    if (r->nrep > 0) {
        *n = r->nrep;
        return r->rep_users;
    }
    *one = r->users;
    *n = 1;
    return one;
}

int
findings_compare(const struct exp_row *a, const struct exp_row *b)
{
    double x, y;
    int na, nb;
    const double *ua = users_of(a, &na, &x), *ub = users_of(b, &nb, &y);

    return spread_compare(ua, na, ub, nb);
}

int
findings_winner(const struct exp_row *rows, int n)
{
    int w = -1;

    for (int i = 0; i < n; i++) {
        if (!findings_usable(&rows[i]))
            continue;
        if (w < 0 || rows[i].users > rows[w].users ||
            (rows[i].users == rows[w].users &&
             findings_server_mb(&rows[i]) < findings_server_mb(&rows[w])))
            w = i;
    }
    return w;
}

/* Two rows alike but in the fields the caller compares. */
static int
same(const struct matrix_config *a, const struct matrix_config *b, int cores, int workers,
     int instances, int cache)
{
    return (!cores || a->cores == b->cores) && (!workers || a->workers == b->workers) &&
           (!instances || a->instances == b->instances) && (!cache || a->cache == b->cache);
}

/* Some item of a's workers list is one of b's ("n" in "1,n"). */
static int
spec_shared(const struct matrix_config *a, const struct matrix_config *b)
{
    char buf[sizeof(a->spec)], *save = NULL;

    snprintf(buf, sizeof(buf), "%s", a->spec);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (matrix_has_spec(b, t))
            return 1;
    return 0;
}

int
findings_twin(const struct exp_row *rows, int n, int i)
{
    const struct exp_row *r = &rows[i];
    int twin = -1;

    for (int j = 0; j < n; j++) {
        const struct exp_row *o = &rows[j];

        if (o->m.cores < r->m.cores && same(&o->m, &r->m, 0, 0, 1, 1) &&
            spec_shared(&o->m, &r->m) && (twin < 0 || o->m.cores > rows[twin].m.cores))
            twin = j;
    }
    return twin;
}

double
findings_scaling(const struct exp_row *rows, int n, int i)
{
    int twin = findings_twin(rows, n, i);

    if (twin < 0 || !findings_usable(&rows[i]) || !findings_usable(&rows[twin]))
        return 0;
    return (double)rows[i].users / rows[twin].users;
}

/* Some row is refused: disturbed, or threads ran outside their cores. */
static int
refused_any(const struct exp_row *rows, int n)
{
    for (int i = 0; i < n; i++)
        if (rows[i].disturbed || rows[i].pin_failed)
            return 1;
    return 0;
}

/* " (median of K repeats, LO to HI)" when there are repeats. */
static void
range_of(FILE *f, const struct exp_row *r)
{
    double lo, hi;
    char a[32], b[32];

    if (r->nrep < 2)
        return;
    spread_range(r->rep_users, r->nrep, &lo, &hi);
    if (lo == hi) {
        fprintf(f, " (in all %d repeats)", r->nrep);
        return;
    }
    fprintf(f, " (median of %d repeats, %s to %s)", r->nrep, units_fmt_thousands(lo, a, sizeof(a)),
            units_fmt_thousands(hi, b, sizeof(b)));
}

static void
winner(FILE *f, const struct exp_row *rows, int n, int w)
{
    const struct exp_row *r = &rows[w];
    int second = -1;
    char a[32], b[32];

    for (int i = 0; i < n; i++)
        if (i != w && findings_usable(&rows[i]) &&
            (second < 0 || rows[i].users > rows[second].users))
            second = i;
    /*
     * Alone among the usable rows: "the most" would rank it above rows
     * that were refused (disturbed, pinning failed), which were not
     * measured, not beaten.
     */
    if (second < 0 && refused_any(rows, n))
        fprintf(f, "**%s** is the only configuration with a result to compare: %s", r->m.label,
                units_fmt_thousands(r->users, a, sizeof(a)));
    else
        fprintf(f, "**%s** served the most users: %s", r->m.label,
                units_fmt_thousands(r->users, a, sizeof(a)));
    range_of(f, r);
    fprintf(f, " (%.0f req/s, p95 %.0f ms, conduitd and nginx %.1f MB PSS)", r->rps, r->p95_ms,
            findings_server_mb(r));
    if (second < 0) {
        fprintf(f, refused_any(rows, n) ? "; it is ranked against none."
                                        : "; no other configuration passed a level.");
        return;
    }
    if (rows[second].users == r->users && r->nrep < 2) {
        fprintf(f, ", as many as %s, which used more memory.", rows[second].m.label);
        return;
    }
    if (findings_compare(r, &rows[second]) <= 0) {
        fprintf(f, ", but no difference was measured from the next, %s (%s", rows[second].m.label,
                units_fmt_thousands(rows[second].users, b, sizeof(b)));
        range_of(f, &rows[second]);
        fprintf(f, "): their repeats overlap.");
        return;
    }
    fprintf(f, ", %.1f %% more than the next, %s (%s",
            (double)(r->users - rows[second].users) * 100 / rows[second].users,
            rows[second].m.label, units_fmt_thousands(rows[second].users, b, sizeof(b)));
    range_of(f, &rows[second]);
    fprintf(f, ")%s.", r->nrep > 1 ? ", a difference its repeats show" : "");
}

/*
 * Among the worker counts of one group (cores, instances, cache alike),
 * which item of the workers list passed the most users: counted per item
 * over every group with two counts or more that passed something.
 */
static int
worker_counts(FILE *f, const struct exp_row *rows, int n)
{
    char items[8][16];
    int wins[8] = {0}, nitems = 0, groups = 0, undecided = 0, twice = 0;

    for (int i = 0; i < n; i++) {
        int best = -1, usable = 0, first = 1;

        /* Each group once: from its first row. */
        for (int j = 0; j < i; j++)
            if (same(&rows[j].m, &rows[i].m, 1, 0, 1, 1))
                first = 0;
        if (!first)
            continue;
        for (int j = i; j < n; j++) {
            if (!same(&rows[j].m, &rows[i].m, 1, 0, 1, 1))
                continue;
            if (!findings_usable(&rows[j]))
                continue;
            usable++;
            if (best < 0 || rows[j].users > rows[best].users)
                best = j;
        }
        /* A count wins only against another that was measured too. */
        if (usable < 2)
            continue;
        groups++;
        for (int j = i; j < n && best >= 0; j++)
            if (j != best && same(&rows[j].m, &rows[i].m, 1, 0, 1, 1) &&
                findings_usable(&rows[j]) && findings_compare(&rows[best], &rows[j]) <= 0)
                best = -1;
        if (best < 0) {
            undecided++;
            continue;
        }
        {
            char spec[32], *save = NULL;

            snprintf(spec, sizeof(spec), "%s", rows[best].m.spec);
            twice |= strchr(spec, ',') != NULL;
            for (char *t = strtok_r(spec, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                int k = 0;

                while (k < nitems && strcmp(items[k], t))
                    k++;
                if (k == nitems && nitems < 8)
                    snprintf(items[nitems++], sizeof(items[0]), "%s", t);
                if (k < 8)
                    wins[k]++;
            }
        }
    }
    if (!groups)
        return 0;
    fprintf(f, " Of the %d group%s of configurations that differ only in the worker count, ",
            groups, groups == 1 ? "" : "s");
    for (int k = 0; k < nitems; k++)
        fprintf(f, "%s%s worker%s per instance won %d", k ? (k == nitems - 1 ? " and " : ", ") : "",
                items[k], strcmp(items[k], "1") ? "s" : "", wins[k]);
    if (undecided)
        fprintf(f, "%sno difference was measured in %d", nitems ? "; " : "", undecided);
    fprintf(f, "%s.", twice ? " (a count named twice on one core, 1 and n, wins for both)" : "");
    return 1;
}

/* Mean over pairs of rows alike but in one field, both passed something. */
struct pairs {
    int n;
    double users_pct, server_mb, per_unit_mb;
    int more, fewer, same; /* the pairs whose repeats show more users, fewer, no difference */
};

static struct pairs
pairs_of(const struct exp_row *rows, int n, int cores, int workers, int instances, int cache,
         int (*ordered)(const struct exp_row *lo, const struct exp_row *hi))
{
    struct pairs p = {0, 0, 0, 0, 0, 0, 0};

    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const struct exp_row *lo = &rows[i], *hi = &rows[j];

            if (i == j || !findings_usable(lo) || !findings_usable(hi) ||
                !same(&lo->m, &hi->m, cores, workers, instances, cache) || !ordered(lo, hi))
                continue;
            p.n++;
            switch (findings_compare(hi, lo)) {
            case 1:
                p.more++;
                break;
            case -1:
                p.fewer++;
                break;
            default:
                p.same++;
            }
            p.users_pct += (double)(hi->users - lo->users) * 100 / lo->users;
            p.server_mb += findings_server_mb(hi) - findings_server_mb(lo);
            if (hi->m.workers != lo->m.workers)
                p.per_unit_mb += (findings_server_mb(hi) - findings_server_mb(lo)) /
                                 ((hi->m.workers - lo->m.workers) * lo->m.instances);
        }
    if (p.n) {
        p.users_pct /= p.n;
        p.server_mb /= p.n;
        p.per_unit_mb /= p.n;
    }
    return p;
}

static int
more_workers(const struct exp_row *lo, const struct exp_row *hi)
{
    return hi->m.workers > lo->m.workers;
}

static int
second_instance(const struct exp_row *lo, const struct exp_row *hi)
{
    return lo->m.instances == 1 && hi->m.instances == 2;
}

/* The same workers in all, spread over more instances (1x2 against 2x1). */
static int
spread(const struct exp_row *lo, const struct exp_row *hi)
{
    return hi->m.instances > lo->m.instances &&
           hi->m.instances * hi->m.workers == lo->m.instances * lo->m.workers;
}

static int
cache_on(const struct exp_row *lo, const struct exp_row *hi)
{
    return !lo->m.cache && hi->m.cache;
}

/* What the repeats of the pairs show, after a sentence's mean. */
static void
tally(FILE *f, int more, int fewer, int same)
{
    if (!more && !fewer)
        fprintf(f, " No difference was measured in any pair: the means are noise.");
    else
        fprintf(f, " By pair: more users in %d, fewer in %d, no difference measured in %d.", more,
                fewer, same);
}

/* The rows no conclusion is drawn from, named; the count of sentences. */
static int
refused(FILE *f, const struct exp_row *rows, int n)
{
    int said = 0;

    for (int i = 0; i < n; i++) {
        const struct exp_row *r = &rows[i];

        if (!r->disturbed && !r->pin_failed)
            continue;
        fprintf(f, "%s%s %s: no conclusion is drawn from it.", said ? " " : "", r->m.label,
                r->disturbed ? "was disturbed (a level found the machine busy with other work, and "
                               "again when it was played again: see its levels)"
                             : "ran threads outside their cores");
        said++;
    }
    if (said)
        fprintf(f, " ");
    return said;
}

int
findings_write(FILE *f, const struct exp_row *rows, int n)
{
    int w = findings_winner(rows, n), said = refused(f, rows, n), twins = 0, more = 0, fewer = 0;
    struct pairs p;
    double scale = 0;

    if (w < 0 && said) {
        fprintf(f, "No configuration passed a level undisturbed: run it again when the machine "
                   "is quiet.\n");
        return said + 1;
    }
    if (w < 0) {
        fprintf(f, "No configuration passed a level: lower --start, or look at the levels' "
                   "reasons in the JSON.\n");
        return 1;
    }
    winner(f, rows, n, w);
    said++;
    said += worker_counts(f, rows, n);
    p = pairs_of(rows, n, 1, 0, 1, 1, more_workers);
    if (p.n) {
        fprintf(f,
                " Each extra worker changed conduitd's PSS by %+.1f MB (mean of %d pairs, each "
                "at its best pass, so with the users' connections in it) and the users served by "
                "%+.1f %%.",
                p.per_unit_mb, p.n, p.users_pct);
        tally(f, p.more, p.fewer, p.same);
        said++;
    }
    p = pairs_of(rows, n, 1, 1, 0, 1, second_instance);
    if (p.n) {
        fprintf(f,
                " A second instance of the same workers behind nginx changed the users by "
                "%+.1f %% at %+.1f MB of PSS (conduitd and nginx, mean of %d pairs).",
                p.users_pct, p.server_mb, p.n);
        tally(f, p.more, p.fewer, p.same);
        said++;
    }
    p = pairs_of(rows, n, 1, 0, 0, 1, spread);
    if (p.n) {
        fprintf(f,
                " The same workers spread over more instances (as 2x1 against 1x2) changed the "
                "users by %+.1f %% at %+.1f MB (mean of %d pairs).",
                p.users_pct, p.server_mb, p.n);
        tally(f, p.more, p.fewer, p.same);
        said++;
    }
    p = pairs_of(rows, n, 1, 1, 1, 0, cache_on);
    if (p.n) {
        fprintf(f, " The cache changed the users by %+.1f %% (mean of %d pairs).", p.users_pct,
                p.n);
        tally(f, p.more, p.fewer, p.same);
        said++;
    }
    for (int i = 0; i < n; i++) {
        double s = findings_scaling(rows, n, i);
        int c;

        if (s <= 0)
            continue;
        scale += s;
        twins++;
        c = findings_compare(&rows[i], &rows[findings_twin(rows, n, i)]);
        more += c > 0;
        fewer += c < 0;
    }
    if (twins) {
        fprintf(f, " One core more multiplied the users by %.2f (mean of %d pairs).", scale / twins,
                twins);
        tally(f, more, fewer, twins - more - fewer);
        said++;
    }
    if (rows[w].nrep < 2)
        fprintf(f, " Each configuration was searched once: no spread was measured, and one search "
                   "cannot rank differences of 5 to 10 %% (--repeat 3 or more).");
    else
        fprintf(f, " A difference is called one only when the worst repeat of one configuration "
                   "beats the best of the other, or an exact two-sided Mann-Whitney test on the "
                   "repeats gives p < 5 %% (which takes 4 repeats or more a side).");
    fprintf(f, "\n");
    return said;
}
