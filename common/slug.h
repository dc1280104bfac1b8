/*
 * slug: the URL name of an article, derived from its title.
 *
 * A slug holds only lowercase ASCII letters, digits and single '-' between
 * them.  slug_from_title() is deterministic, so two articles with the same
 * title get the same base: uniqueness is the caller's job, which on a
 * conflict retries with slug_with_suffix(base, n) ("base-<n in base 36>")
 * for some n, e.g. the article id or a random number.
 */
#ifndef CONDUITD_SLUG_H
#define CONDUITD_SLUG_H

#include <stddef.h>
#include <stdint.h>

/* Longest base slug_from_title() produces. */
#define SLUG_MAX_BASE 80
/* Longest slug of all: a base, '-', and UINT64_MAX in base 36 (13 digits). */
#define SLUG_MAX_LEN (SLUG_MAX_BASE + 1 + 13)

/*
 * Writes the slug of title[0..n) and a NUL to out, at most
 * min(outcap - 1, SLUG_MAX_BASE) bytes, cutting at a word boundary's '-'
 * rather than ending on one.  A title with no ASCII letter or digit gives
 * "article"; one whose slug would be "feed", which the feed route shadows,
 * gives "feed-article".  Returns the length (0 only when outcap < 2: there is
 * then no room for any slug).
 */
size_t slug_from_title(const char *title, size_t n, char *out, size_t outcap);

/*
 * Writes "<base>-<n in base 36>" and a NUL to out.  The base is shortened
 * (never to a trailing '-') when the whole would not fit in outcap - 1 bytes.
 * out may be base itself.  Returns the length, or 0 when base is empty or
 * outcap cannot hold even "x-<suffix>".
 */
size_t slug_with_suffix(const char *base, uint64_t n, char *out, size_t outcap);

#endif
