/*
 * text: readable filler prose for the seeded bodies, descriptions,
 * comments and bios, made of sentences of words from a fixed list, chosen
 * by a 64-bit key (the same key always writes the same text).
 */
#ifndef CONDUITD_SEED_TEXT_H
#define CONDUITD_SEED_TEXT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Writes whole sentences into out until at least min_len bytes are written
 * (or the next sentence would not fit in cap - 1), starting a new paragraph
 * ("\n\n") every few sentences when paragraphs is set.  NUL-terminated;
 * returns the length.  cap must be at least 256.
 */
size_t text_prose(uint64_t key, size_t min_len, int paragraphs, char *out, size_t cap);

#endif
