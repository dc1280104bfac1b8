/*
 * req: turning a profile's request into bytes.  Picks the random names a
 * page uses (an article, another user, a tag, a page offset) from the
 * dataset's scheme, expands the templates, and writes the HTTP request.
 * The virtual users, the open-loop mode and the SQL ceiling share it, so
 * all three send the same mix.
 */
#ifndef CONDUIT_BENCH_REQ_H
#define CONDUIT_BENCH_REQ_H

#include <stddef.h>
#include <stdint.h>

#include "bench/profile.h"
#include "common/dataset.h"

/* The numbers behind a page's names. */
struct req_pick {
    int64_t me;      /* the caller's user id */
    int64_t article; /* a random article */
    int64_t user;    /* a random user, not the caller when there are others */
    int64_t tag;     /* a random tag */
    int offset;      /* 10 * k, k in 1..20 */
    uint64_t n;      /* unique within the run */
    const char *my_slug;
};

/* The strings for the variables a page uses (prof_values points into it). */
struct req_vals {
    struct prof_values v;
    char slug[DATASET_SLUG_MAX], article[24], user[DATASET_NAME_MAX], user_id[24];
    char tag[DATASET_NAME_MAX], offset[16], me[DATASET_NAME_MAX], email[DATASET_NAME_MAX + 16];
    char viewer[24], n[24];
};

/* xorshift64*: fast, and good enough to pick pages and names. */
static inline uint64_t
req_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [0, 1). */
static inline double
req_uniform(uint64_t *s)
{
    return (double)(req_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Fresh random names for a page (me, n and my_slug are left alone). */
void req_pick_page(struct req_pick *pk, const struct dataset *ds, uint64_t *rng);

/* Fills the variables in mask (bits of enum prof_var); -1 if one has no value. */
int req_values(struct req_vals *out, const struct req_pick *pk, const struct dataset *ds,
               uint32_t mask);

/*
 * Writes the HTTP/1.1 request (with "Authorization: Token" when token is
 * set) into out, NUL-terminated; its length, or -1 when it does not fit.
 */
int req_http(char *out, size_t cap, const struct prof_request *r, const struct req_vals *v,
             const char *host, const char *token);

#endif
