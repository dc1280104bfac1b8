/*
 * units: the numbers people type on the command line and in profiles.
 * Durations take a unit (us, ms, s, m, h; a bare number is seconds),
 * percentages an optional "%".  Each returns 0, or -1 for anything that is
 * not entirely a finite non-negative number with a known unit.
 */
#ifndef CONDUIT_BENCH_UNITS_H
#define CONDUIT_BENCH_UNITS_H

int units_duration(const char *s, double *seconds);
int units_percent(const char *s, double *percent);
int units_count(const char *s, long min, long max, long *out);

/* "1.2ms", "340us", "2.5s": a short human form of a duration in us. */
const char *units_fmt_us(double us, char *buf, unsigned cap);

/* A count rounded, thousands separated, as the reports write them: "12,000". */
const char *units_fmt_thousands(double v, char *buf, unsigned cap);

/* A duration for a person: "45 s", "12 min 05 s", "1 h 02 min". */
const char *units_fmt_s(double s, char *buf, unsigned cap);

#endif
