/*
 * zone_alloc: the allocator of one arena of the shared cache
 * (common/cache_zone.h): blocks of any size in a fixed piece of memory,
 * found by segregated fit (one free list per power of two) and merged with
 * their free neighbours when freed, so that an arena emptied by evictions
 * is one free block again (a value as large as the arena then fits).
 *
 * Every block carries its size and whether it is in use in a word at each
 * end (boundary tags): freeing finds both neighbours without a search.  A
 * block is a multiple of 16 bytes, 32 at least (a free block holds its two
 * list links); what it gives is its size less the two tags.
 *
 * Offsets, never pointers: the arena lives in memory several processes
 * map, and an offset can be checked against the arena's bounds before it
 * is followed.  An offset names a block's first usable byte and is never
 * 0, so 0 means "none" and memory fresh from mmap (zeros) holds no link.
 *
 * No locking: the caller holds the lock of the arena's shard.
 */
#ifndef CONDUITD_ZONE_ALLOC_H
#define CONDUITD_ZONE_ALLOC_H

#include <stdint.h>

#define ZONE_ALLOC_CLASSES 64
#define ZONE_ALLOC_MIN 32 /* the smallest block, tags included */

struct zone_alloc {
    uint64_t size;                     /* of the arena: a multiple of 16 */
    uint64_t used;                     /* bytes in blocks in use, tags included */
    uint64_t nonempty;                 /* bit c set: free list c holds a block */
    uint64_t head[ZONE_ALLOC_CLASSES]; /* free blocks of [2^c, 2^(c+1)) bytes */
};

/* The whole arena (size rounded down to 16, at least ZONE_ALLOC_MIN) as one free block. */
void zone_alloc_init(struct zone_alloc *a, unsigned char *arena, uint64_t size);

/* A block of at least n usable bytes: its offset, or 0 when no free block is large enough. */
uint64_t zone_alloc(struct zone_alloc *a, unsigned char *arena, uint64_t n);

/* Gives back the block at off (an offset zone_alloc() returned). */
void zone_free(struct zone_alloc *a, unsigned char *arena, uint64_t off);

/* What a block of n usable bytes takes of the arena, tags included. */
uint64_t zone_alloc_need(uint64_t n);

/* Is off where a block in use starts, within the arena?  Checked before a link is followed. */
int zone_alloc_valid(const struct zone_alloc *a, const unsigned char *arena, uint64_t off);

/*
 * The whole arena walked: 0 when every block's two tags agree, the blocks
 * tile the arena, no two free blocks touch, the free lists hold exactly
 * the free blocks and the bytes in use add up; -1 otherwise.  For tests.
 */
int zone_alloc_check(const struct zone_alloc *a, const unsigned char *arena);

#endif
