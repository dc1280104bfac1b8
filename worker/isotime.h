/*
 * isotime: timestamps as the API prints them, 2026-12-02T10:13:44.123Z.
 *
 * Pure arithmetic on the proleptic Gregorian calendar in UTC: no gmtime(),
 * so neither TZ nor the C library's locks are involved, and it is fast
 * enough to run once per field of every article in a list.
 */
#ifndef CONDUITD_ISOTIME_H
#define CONDUITD_ISOTIME_H

#include <stdint.h>

/* Characters of "YYYY-MM-DDTHH:MM:SS.mmmZ", without the NUL. */
#define ISOTIME_LEN 24

/*
 * From a PostgreSQL binary timestamptz (int64 microseconds since
 * 2000-01-01 00:00:00 UTC).  Sub-millisecond parts are truncated toward
 * minus infinity, so the printed instant is never later than the stored one.
 * Years outside 0000..9999 (and PostgreSQL's +-infinity) are clamped to
 * 0000-01-01T00:00:00.000Z or 9999-12-31T23:59:59.999Z.
 */
void isotime_from_pg_usec(int64_t usec_since_2000, char out[ISOTIME_LEN + 1]);

/* From milliseconds since 1970-01-01 UTC.  Returns 0, or -1 when clamped. */
int isotime_from_unix_ms(int64_t ms, char out[ISOTIME_LEN + 1]);

#endif
