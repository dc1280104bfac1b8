/*
 * search: see search.h.
 */
#include "config.h"

#include "bench/search.h"

#include <math.h>
#include <string.h>

#include "bench/report.h"
#include "bench/spread.h"
#include "bench/units.h"

/* An INT or TERM was received (experiment sets bench.stop; other modes
   leave it NULL and are never stopped this way). */
static int
stopped(const struct bench *b)
{
    return b->stop && *b->stop;
}

static struct level *
play_once(struct bench *b, const struct options *o, struct search_result *r, int users)
{
    struct level *l = &r->level[r->nlevels++];
    double load = acct_loadavg(b->loadavg_path), own = b->own_load, busy;

    bench_level(b, users, o->ramp_s, o->settle_max_s, o->hold_s, l);
    busy = l->acct.other_s;
    for (int g = 0; g < AG_NGROUPS; g++)
        busy += l->acct.cpu_s[g];
    l->load_before = load;
    l->own_load_before = own;
    l->disturbed =
        spread_disturbed(l->acct.other_s, busy, load, own, l->acct.cores, o->disturbed_other_pct,
                         l->disturbed_why, sizeof(l->disturbed_why));
    if (l->acct.pin_stray && !r->pin_stray++)
        snprintf(r->pin_what, sizeof(r->pin_what), "%s", l->acct.pin_stray_what);
    if (!b->quiet) {
        fprintf(b->log, "---- level %d\n", r->nlevels);
        report_level_text(b->log, l, b->prof);
    }
    return l;
}

/*
 * A level others disturbed is played again after a pause; if disturbed
 * again, the search's result is marked disturbed (a verdict drawn from it
 * would be the other processes').
 */
static struct level *
play(struct bench *b, const struct options *o, struct search_result *r, int users)
{
    struct level *l = play_once(b, o, r, users);

    if (!l->disturbed)
        return l;
    r->disturbed_levels++;
    fprintf(stderr, "conduit-bench: level %d (%d users) disturbed: %s%s\n", r->nlevels, users,
            l->disturbed_why,
            r->nlevels < SEARCH_MAX_LEVELS - 1 && !stopped(b) ? "; replayed after a pause" : "");
    if (r->nlevels >= SEARCH_MAX_LEVELS - 1 || stopped(b)) {
        r->disturbed = 1;
        return l;
    }
    bench_wait(b, o->disturbed_pause_s);
    l = play_once(b, o, r, users);
    if (l->disturbed) {
        r->disturbed_levels++;
        r->disturbed = 1;
        fprintf(stderr, "conduit-bench: level %d (%d users) disturbed again: %s\n", r->nlevels,
                users, l->disturbed_why);
    }
    return l;
}

static int
close_enough(const struct options *o, int lo, int hi)
{
    return hi - lo <= 1 || (double)(hi - lo) <= (double)hi * o->resolution_pct / 100;
}

int
search_run(struct bench *b, const struct options *o, struct search_result *r)
{
    int max_users = o->b.max_users, lo = 0, hi = 0, users = o->start;
    int limit = o->max_levels < SEARCH_MAX_LEVELS - 1 ? o->max_levels : SEARCH_MAX_LEVELS - 1;

    memset(r, 0, sizeof(*r));
    r->best = r->fail = -1;
    if (users > max_users)
        users = max_users;
    if (users < o->min_users)
        users = o->min_users;
    r->stopped = "resolution reached";
    for (;;) {
        struct level *l;

        if (r->nlevels >= limit) {
            r->stopped = "--max-levels reached";
            break;
        }
        if (stopped(b)) {
            r->stopped = "interrupted";
            break;
        }
        l = play(b, o, r, users);
        if (!l->pass && !o->no_rerun && r->nlevels < limit && !stopped(b) && !r->disturbed) {
            /* Confirm a failure before it bounds the search; not once
               stopped: an INT ends the search after the level in
               progress, and a failed level would otherwise be played
               again, a second wait of up to --settle-max + --hold. */
            l = play(b, o, r, users);
        }
        if (r->disturbed) {
            /* No conclusion will be drawn from it: the time is better spent elsewhere. */
            r->stopped = "a level stayed disturbed when played again";
            break;
        }
        if (l->pass) {
            lo = users;
            r->best = r->nlevels - 1;
        } else {
            hi = users;
            r->fail = r->nlevels - 1;
        }
        if (!hi) {
            if (lo >= max_users) {
                r->stopped = o->max_users_why ? o->max_users_why : "--max-users passed";
                break;
            }
            users = (int)ceil(users * o->growth);
            if (users > max_users)
                users = max_users;
            continue;
        }
        if (hi <= o->min_users) {
            r->stopped = "--min-users failed";
            break;
        }
        if (close_enough(o, lo, hi))
            break;
        users = lo + (hi - lo) / 2;
        if (users < o->min_users)
            users = o->min_users;
    }
    /* Play the best pass again: the figures reported are seen twice. */
    if (lo > 0 && !o->no_rerun && r->best != r->nlevels - 1 && r->nlevels < SEARCH_MAX_LEVELS &&
        !stopped(b) && !r->disturbed) {
        struct level *l = play(b, o, r, lo);

        if (l->pass)
            r->best = r->nlevels - 1;
        else
            r->stopped = "the best pass failed when played again (see its levels)";
    }
    r->users_pass = lo;
    r->users_fail = hi;
    return 0;
}

void
search_free(struct search_result *r)
{
    for (int i = 0; i < r->nlevels; i++)
        level_free(&r->level[i]);
    r->nlevels = 0;
}

void
search_print(FILE *f, const struct search_result *r)
{
    char b1[16], b2[16];

    fprintf(f, "%5s %7s %6s %9s %9s %9s %8s %8s  %s\n", "level", "users", "result", "req/s", "p95",
            "p99", "errors", "gen-cpu", "why");
    for (int i = 0; i < r->nlevels; i++) {
        const struct level *l = &r->level[i];
        const struct stats *s = l->st;

        fprintf(f, "%5d %7d %6s %9.1f %9s %9s %7.2f%% %7.0f%%  %s\n", i + 1, l->users,
                l->pass ? "pass" : "FAIL", l->rps,
                units_fmt_us((double)hist_percentile(&s->all, 95), b1, sizeof(b1)),
                units_fmt_us((double)hist_percentile(&s->all, 99), b2, sizeof(b2)),
                s->requests ? (double)stats_errors(s) * 100 / (double)s->requests : 0,
                l->gen_cpu_pct, l->why);
    }
    fprintf(f, "capacity: %d users pass", r->users_pass);
    if (r->users_fail)
        fprintf(f, ", %d fail (confirmed)", r->users_fail);
    fprintf(f, "; stopped: %s\n", r->stopped);
    if (r->disturbed_levels)
        fprintf(f, "disturbed levels: %d%s\n", r->disturbed_levels,
                r->disturbed ? "; one stayed disturbed when played again: the result is disturbed"
                             : "");
}

cJSON *
search_json(const struct search_result *r, const struct profile *p)
{
    cJSON *o = cJSON_CreateObject(), *levels = cJSON_CreateArray();

    cJSON_AddNumberToObject(o, "users_passed", r->users_pass);
    cJSON_AddNumberToObject(o, "users_failed", r->users_fail);
    cJSON_AddStringToObject(o, "stopped", r->stopped);
    cJSON_AddNumberToObject(o, "best_level", r->best);
    cJSON_AddNumberToObject(o, "fail_level", r->fail);
    cJSON_AddNumberToObject(o, "disturbed_levels", r->disturbed_levels);
    cJSON_AddBoolToObject(o, "disturbed", r->disturbed);
    if (r->pin_stray)
        cJSON_AddStringToObject(o, "pinning_stray", r->pin_what);
    for (int i = 0; i < r->nlevels; i++)
        cJSON_AddItemToArray(levels, report_level_json(&r->level[i], p));
    cJSON_AddItemToObject(o, "levels", levels);
    return o;
}
