/*
 * units: see units.h.
 */
#include "config.h"

#include "bench/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A finite number >= 0 at the start of s; *end after it.  -1 if none. */
static int
leading_number(const char *s, double *v, char **end)
{
    if (!s || !*s)
        return -1;
    errno = 0;
    *v = strtod(s, end);
    if (*end == s || errno || !isfinite(*v) || *v < 0)
        return -1;
    return 0;
}

int
units_duration(const char *s, double *seconds)
{
    static const struct {
        const char *suffix;
        double scale;
    } units[] = {{"", 1}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}};
    char *end;
    double v;

    if (leading_number(s, &v, &end) < 0)
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            *seconds = v * units[i].scale;
            return 0;
        }
    }
    return -1;
}

int
units_percent(const char *s, double *percent)
{
    char *end;
    double v;

    if (leading_number(s, &v, &end) < 0 || v > 100)
        return -1;
    if (*end && strcmp(end, "%") != 0)
        return -1;
    *percent = v;
    return 0;
}

int
units_count(const char *s, long min, long max, long *out)
{
    char *end;
    long v;

    if (!s || !*s)
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

const char *
units_fmt_us(double us, char *buf, unsigned cap)
{
    if (us < 1000)
        snprintf(buf, cap, "%.0fus", us);
    else if (us < 1e6)
        snprintf(buf, cap, "%.*fms", us < 1e4 ? 2 : us < 1e5 ? 1 : 0, us / 1e3);
    else
        snprintf(buf, cap, "%.2fs", us / 1e6);
    return buf;
}

const char *
units_fmt_s(double s, char *buf, unsigned cap)
{
    long t = (long)(s + 0.5);

    if (t >= 3600)
        snprintf(buf, cap, "%ld h %02ld min", t / 3600, t % 3600 / 60);
    else if (t >= 60)
        snprintf(buf, cap, "%ld min %02ld s", t / 60, t % 60);
    else
        snprintf(buf, cap, "%ld s", t);
    return buf;
}

const char *
units_fmt_thousands(double v, char *buf, unsigned cap)
{
    char raw[32];
    int len = snprintf(raw, sizeof(raw), "%.0f", v), o = 0;

    for (int i = 0; i < len && o < (int)cap - 2; i++) {
        if (i && raw[i - 1] != '-' && (len - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = raw[i];
    }
    buf[o] = '\0';
    return buf;
}
