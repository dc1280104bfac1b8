/*
 * mode_run: `run` (one level) and `search` (the capacity).
 */
#include "config.h"

#include "bench/modes.h"
#include "bench/report.h"
#include "bench/search.h"

int
mode_run(struct options *o)
{
    struct profile *prof;
    struct bench b;
    struct level l;
    cJSON *root;
    int rc;

    if (modes_setup(o, &prof, &b) < 0)
        return 2;
    bench_level(&b, o->users, o->ramp_s, o->settle_max_s, o->hold_s, &l);
    bench_drain(&b, prof->timeout_s);
    printf("conduit-bench run: %d users against %s\n", o->users, b.cc.host);
    report_machine_text(stdout, &b);
    report_level_text(stdout, &l, prof);
    root = modes_json_header(o, &b);
    cJSON_AddItemToObject(root, "level", report_level_json(&l, prof));
    modes_json_totals(root, &b);
    rc = l.pass ? 0 : 1;
    level_free(&l);
    return modes_finish(o, root, &b, prof, rc);
}

int
mode_search(struct options *o)
{
    struct profile *prof;
    struct bench b;
    struct search_result r;
    cJSON *root;

    if (modes_setup(o, &prof, &b) < 0)
        return 2;
    search_run(&b, o, &r);
    bench_drain(&b, prof->timeout_s);
    printf("conduit-bench search against %s (hold %.0f s a level)\n", b.cc.host, o->hold_s);
    report_machine_text(stdout, &b);
    search_print(stdout, &r);
    if (r.best >= 0) {
        printf("best pass:\n");
        report_level_text(stdout, &r.level[r.best], prof);
    }
    root = modes_json_header(o, &b);
    cJSON_AddItemToObject(root, "search", search_json(&r, prof));
    modes_json_totals(root, &b);
    search_free(&r);
    return modes_finish(o, root, &b, prof, 0);
}
