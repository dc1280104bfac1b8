/*
 * progress: see progress.h.
 */
#include "config.h"

#include "seed/progress.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

double
progress_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
progress_init(struct progress *p, FILE *out, int quiet)
{
    memset(p, 0, sizeof(*p));
    p->out = out;
    p->quiet = quiet;
    p->tty = isatty(fileno(out));
    p->start = progress_now();
}

void
progress_begin(struct progress *p, const char *name, int64_t total)
{
    struct progress_stage *s;

    if (p->n == PROGRESS_MAX_STAGES)
        p->n--; /* cannot happen with the seeder's fixed stages; keep the last slot */
    s = &p->stages[p->n];
    snprintf(s->name, sizeof(s->name), "%s", name);
    s->rows = total < 0 ? -1 : 0;
    p->total = total;
    p->stage_start = p->last_draw = progress_now();
    progress_update(p, 0);
}

static void
draw(struct progress *p, int64_t done, int final)
{
    struct progress_stage *s = &p->stages[p->n];
    double t = progress_now() - p->stage_start;
    char eta[32] = "";

    if (p->quiet)
        return;
    if (p->tty)
        fputc('\r', p->out);
    if (p->total < 0) {
        fprintf(p->out, "  %-40s %8.1f s", s->name, t);
    } else if (final) {
        fprintf(p->out, "  %-40s %11lld rows %8.1f s %10.0f rows/s", s->name, (long long)done, t,
                t > 0 ? (double)done / t : 0.0);
    } else {
        double rate = t > 0 ? (double)done / t : 0.0;
        if (rate > 0 && done > 0)
            snprintf(eta, sizeof(eta), "ETA %.0f s", (double)(p->total - done) / rate);
        fprintf(p->out, "  %-40s %11lld / %lld rows %5.1f %% %10.0f rows/s %s", s->name,
                (long long)done, (long long)p->total,
                p->total > 0 ? 100.0 * (double)done / (double)p->total : 100.0, rate, eta);
    }
    if (p->tty)
        fputs("\033[K", p->out);
    if (final || !p->tty)
        fputc('\n', p->out);
    fflush(p->out);
}

void
progress_update(struct progress *p, int64_t done)
{
    double now = progress_now();

    /* A terminal is redrawn five times a second; a log gets a line every 30 s. */
    if (now - p->last_draw < (p->tty ? 0.2 : 30.0))
        return;
    p->last_draw = now;
    draw(p, done, 0);
}

double
progress_end(struct progress *p, int64_t done)
{
    struct progress_stage *s = &p->stages[p->n];

    s->seconds = progress_now() - p->stage_start;
    if (s->rows >= 0)
        s->rows = done;
    draw(p, done, 1);
    p->n++;
    return s->seconds;
}
