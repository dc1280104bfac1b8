/*
 * text: see text.h.  The word list is part of the dataset (editing it
 * changes every seeded body), so it is fixed like dataset.c's lists.
 */
#include "config.h"

#include "seed/text.h"

#include <string.h>

#include "common/dataset.h"

static const char *const words[128] = {
    "the",     "a",       "of",      "and",     "to",        "in",         "is",       "it",
    "that",    "we",      "this",    "for",     "with",      "on",         "not",      "but",
    "you",     "when",    "what",    "every",   "one",       "our",        "from",     "by",
    "then",    "so",      "all",     "more",    "less",      "only",       "still",    "never",
    "always",  "often",   "server",  "request", "query",     "index",      "table",    "worker",
    "process", "thread",  "memory",  "cache",   "latency",   "throughput", "database", "client",
    "socket",  "kernel",  "queue",   "lock",    "page",      "row",        "test",     "build",
    "release", "user",    "team",    "code",    "design",    "problem",    "answer",   "idea",
    "change",  "system",  "network", "file",    "disk",      "clock",      "measure",  "write",
    "read",    "run",     "ship",    "break",   "fix",       "learn",      "think",    "wait",
    "grow",    "scale",   "fail",    "start",   "stop",      "keep",       "find",     "make",
    "simple",  "fast",    "slow",    "small",   "large",     "quiet",      "careful",  "honest",
    "hidden",  "obvious", "strange", "useful",  "expensive", "cheap",      "modern",   "old",
    "new",     "first",   "last",    "next",    "whole",     "real",       "good",     "bad",
    "morning", "evening", "coffee",  "garden",  "river",     "mountain",   "city",     "book",
    "song",    "winter",  "summer",  "friend",  "story",     "lesson",     "reason",   "question",
};

/* The next 64 bits of a key's sequence (splitmix64's step). */
static uint64_t
next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    return dataset_hash(*s, 0, 0);
}

size_t
text_prose(uint64_t key, size_t min_len, int paragraphs, char *out, size_t cap)
{
    uint64_t s = key;
    size_t len = 0;
    int sentence = 0;

    if (cap < 256)
        return 0;
    /* The longest sentence: 16 words of at most 10 letters and a space, a period, "\n\n". */
    while (len < min_len && len + 16 * 11 + 4 < cap) {
        uint64_t h = next(&s);
        int n = 4 + (int)(h % 13); /* 4 to 16 words */

        h /= 13;
        if (sentence > 0) {
            int para = paragraphs && sentence % 5 == 0;
            memcpy(out + len, para ? "\n\n" : " ", para ? 2 : 1);
            len += para ? 2 : 1;
        }
        for (int k = 0; k < n; k++) {
            const char *w;
            size_t wl;

            /* 7 bits a word, 8 words a hash. */
            if (k % 8 == 0 && k)
                h = next(&s);
            w = words[h & 127];
            h >>= 7;
            wl = strlen(w);
            if (k)
                out[len++] = ' ';
            memcpy(out + len, w, wl);
            if (k == 0)
                out[len] = (char)(out[len] - 'a' + 'A');
            len += wl;
        }
        out[len++] = '.';
        sentence++;
    }
    out[len] = '\0';
    return len;
}
