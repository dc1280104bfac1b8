/*
 * zone_alloc: see zone_alloc.h.
 *
 * A block at offset b (a multiple of 16) of s bytes: the tag s | USED at b
 * and at b + s - 8, what it gives in between.  Its offset is b + 8.  A
 * free block's first two words are the offsets of the next and previous
 * free blocks of its list.
 *
 * An allocation looks at a few blocks of its own class first (most values
 * of one kind are about one size), then takes the first block of a larger
 * class, which always fits, and only when there is none walks its own
 * class to the end.  The remainder of a block larger than asked goes back
 * to the lists.
 */
#include "config.h"

#include "common/zone_alloc.h"

#include <string.h>

#define USED 1ull
#define SIZE(tag) ((tag) & ~15ull)
#define FIRST_FIT_SCAN 8

static uint64_t
get(const unsigned char *arena, uint64_t at)
{
    uint64_t v;

    memcpy(&v, arena + at, sizeof(v));
    return v;
}

static void
set(unsigned char *arena, uint64_t at, uint64_t v)
{
    memcpy(arena + at, &v, sizeof(v));
}

static unsigned
class_of(uint64_t size)
{
    return 63u - (unsigned)__builtin_clzll(size);
}

static void
mark(unsigned char *arena, uint64_t b, uint64_t size, uint64_t used)
{
    set(arena, b, size | used);
    set(arena, b + size - 8, size | used);
}

static void
list_insert(struct zone_alloc *a, unsigned char *arena, uint64_t b, uint64_t size)
{
    unsigned c = class_of(size);
    uint64_t off = b + 8, next = a->head[c];

    set(arena, off, next);
    set(arena, off + 8, 0);
    if (next)
        set(arena, next + 8, off);
    a->head[c] = off;
    a->nonempty |= 1ull << c;
}

static void
list_remove(struct zone_alloc *a, unsigned char *arena, uint64_t b, uint64_t size)
{
    unsigned c = class_of(size);
    uint64_t off = b + 8, next = get(arena, off), prev = get(arena, off + 8);

    if (prev)
        set(arena, prev, next);
    else
        a->head[c] = next;
    if (next)
        set(arena, next + 8, prev);
    if (!a->head[c])
        a->nonempty &= ~(1ull << c);
}

void
zone_alloc_init(struct zone_alloc *a, unsigned char *arena, uint64_t size)
{
    memset(a, 0, sizeof(*a));
    size &= ~15ull;
    if (size < ZONE_ALLOC_MIN)
        size = ZONE_ALLOC_MIN; /* the caller gives at least this much */
    a->size = size;
    mark(arena, 0, size, 0);
    list_insert(a, arena, 0, size);
}

uint64_t
zone_alloc_need(uint64_t n)
{
    uint64_t t;

    if (n > UINT64_MAX - 64)
        return UINT64_MAX;
    t = (n + 16 + 15) & ~15ull;
    return t < ZONE_ALLOC_MIN ? ZONE_ALLOC_MIN : t;
}

/* The first block of list c of at least need bytes, looking at max of them; 0: none. */
static uint64_t
first_fit(const struct zone_alloc *a, const unsigned char *arena, unsigned c, uint64_t need,
          unsigned max)
{
    uint64_t off = a->head[c];

    for (unsigned i = 0; off && i < max; off = get(arena, off), i++)
        if (SIZE(get(arena, off - 8)) >= need)
            return off;
    return 0;
}

uint64_t
zone_alloc(struct zone_alloc *a, unsigned char *arena, uint64_t n)
{
    uint64_t need = zone_alloc_need(n), off, b, size, larger;
    unsigned c;

    if (need > a->size)
        return 0;
    c = class_of(need);
    off = first_fit(a, arena, c, need, FIRST_FIT_SCAN);
    larger = c < 63 ? a->nonempty & (~0ull << (c + 1)) : 0;
    if (!off && larger)
        off = a->head[__builtin_ctzll(larger)];
    if (!off)
        off = first_fit(a, arena, c, need, UINT32_MAX);
    if (!off)
        return 0;
    b = off - 8;
    size = SIZE(get(arena, b));
    list_remove(a, arena, b, size);
    if (size - need >= ZONE_ALLOC_MIN) {
        mark(arena, b + need, size - need, 0);
        list_insert(a, arena, b + need, size - need);
        size = need;
    }
    mark(arena, b, size, USED);
    a->used += size;
    return off;
}

void
zone_free(struct zone_alloc *a, unsigned char *arena, uint64_t off)
{
    uint64_t b = off - 8, size = SIZE(get(arena, b));

    a->used -= size;
    if (b + size < a->size) {
        uint64_t tag = get(arena, b + size);
        if (!(tag & USED)) {
            list_remove(a, arena, b + size, SIZE(tag));
            size += SIZE(tag);
        }
    }
    if (b > 0) {
        uint64_t tag = get(arena, b - 8);
        if (!(tag & USED)) {
            b -= SIZE(tag);
            list_remove(a, arena, b, SIZE(tag));
            size += SIZE(tag);
        }
    }
    mark(arena, b, size, 0);
    list_insert(a, arena, b, size);
}

int
zone_alloc_valid(const struct zone_alloc *a, const unsigned char *arena, uint64_t off)
{
    uint64_t b, tag, size;

    if (off < 8 || off >= a->size || (off - 8) % 16 != 0)
        return 0;
    b = off - 8;
    tag = get(arena, b);
    size = SIZE(tag);
    return (tag & USED) && size >= ZONE_ALLOC_MIN && size <= a->size - b &&
           get(arena, b + size - 8) == tag;
}

int
zone_alloc_check(const struct zone_alloc *a, const unsigned char *arena)
{
    uint64_t b = 0, used = 0, nfree = 0, listed = 0;
    int prev_free = 0;

    while (b < a->size) {
        uint64_t tag = get(arena, b), size = SIZE(tag);
        if (size < ZONE_ALLOC_MIN || size > a->size - b || get(arena, b + size - 8) != tag)
            return -1;
        if (tag & USED) {
            used += size;
            prev_free = 0;
        } else {
            if (prev_free)
                return -1; /* two free neighbours: a free that did not merge */
            nfree++;
            prev_free = 1;
        }
        b += size;
    }
    if (b != a->size || used != a->used)
        return -1;
    for (unsigned c = 0; c < ZONE_ALLOC_CLASSES; c++) {
        uint64_t prev = 0;
        if (!a->head[c] != !(a->nonempty & (1ull << c)))
            return -1;
        for (uint64_t off = a->head[c]; off; prev = off, off = get(arena, off)) {
            uint64_t tag;
            if (off < 8 || off >= a->size || (off - 8) % 16 != 0 || ++listed > nfree)
                return -1;
            tag = get(arena, off - 8);
            if ((tag & USED) || SIZE(tag) < ZONE_ALLOC_MIN || class_of(SIZE(tag)) != c ||
                get(arena, off + 8) != prev)
                return -1;
        }
    }
    return listed == nfree ? 0 : -1;
}
