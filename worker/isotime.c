/*
 * isotime: see isotime.h.  The calendar conversion is Howard Hinnant's
 * civil_from_days (http://howardhinnant.github.io/date_algorithms.html),
 * which counts in 400-year eras starting on March 1st so that the leap day
 * falls at the end of a year.
 */
#include "config.h"

#include "worker/isotime.h"

#define MS_PER_DAY INT64_C(86400000)
/* 2000-01-01 (the PostgreSQL epoch) minus 1970-01-01, in milliseconds. */
#define PG_EPOCH_MS INT64_C(946684800000)
/* Days from 1970-01-01 to 0000-01-01 and to 10000-01-01. */
#define DAYS_MIN INT64_C(-719528)
#define DAYS_END INT64_C(2932897)

static int64_t
floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static void
put2(char *p, unsigned v)
{
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
}

int
isotime_from_unix_ms(int64_t ms, char out[ISOTIME_LEN + 1])
{
    int64_t days = floor_div(ms, MS_PER_DAY), z, era;
    unsigned doe, yoe, doy, mp, d, m, msd;
    int64_t y;
    int rc = 0;

    if (days < DAYS_MIN) {
        days = DAYS_MIN;
        ms = days * MS_PER_DAY;
        rc = -1;
    } else if (days >= DAYS_END) {
        days = DAYS_END - 1;
        ms = DAYS_END * MS_PER_DAY - 1;
        rc = -1;
    }
    msd = (unsigned)(ms - days * MS_PER_DAY);

    z = days + 719468;
    era = floor_div(z, 146097);
    doe = (unsigned)(z - era * 146097);
    yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = (int64_t)yoe + era * 400;
    doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2)
        y++;

    put2(out, (unsigned)(y / 100));
    put2(out + 2, (unsigned)(y % 100));
    out[4] = '-';
    put2(out + 5, m);
    out[7] = '-';
    put2(out + 8, d);
    out[10] = 'T';
    put2(out + 11, msd / 3600000);
    out[13] = ':';
    put2(out + 14, msd / 60000 % 60);
    out[16] = ':';
    put2(out + 17, msd / 1000 % 60);
    out[19] = '.';
    out[20] = (char)('0' + msd % 1000 / 100);
    put2(out + 21, msd % 100);
    out[23] = 'Z';
    out[24] = '\0';
    return rc;
}

void
isotime_from_pg_usec(int64_t usec_since_2000, char out[ISOTIME_LEN + 1])
{
    /* Divide first: adding the epoch offset in microseconds could overflow. */
    (void)isotime_from_unix_ms(floor_div(usec_since_2000, 1000) + PG_EPOCH_MS, out);
}
