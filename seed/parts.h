/*
 * parts: sql/schema.sql cut the way its header says a bulk loader sends
 * it: the pre-load part (everything above the line "-- @@ post-load"),
 * and the post-load part, itself cut at its section banners
 *
 *     -- =====...
 *     -- Foreign keys (each validated in one pass over the loaded data)
 *     -- =====...
 *
 * so each section can be timed on its own (sections hold whole
 * statements).  Also the names of the tables and functions the pre-load
 * part creates, which is what --reset drops.
 */
#ifndef CONDUITD_SEED_PARTS_H
#define CONDUITD_SEED_PARTS_H

#define PARTS_MAX_SECTIONS 8
#define PARTS_MAX_NAMES 64
#define PARTS_NAME_MAX 64

struct parts_section {
    char name[PARTS_NAME_MAX]; /* the banner's title, up to a " (" */
    char *sql;
};

/* Owns every string in it. */
struct parts {
    char *pre;
    int nsections;
    struct parts_section sections[PARTS_MAX_SECTIONS];
    int ntables, nfunctions;
    char tables[PARTS_MAX_NAMES][PARTS_NAME_MAX];
    char functions[PARTS_MAX_NAMES][PARTS_NAME_MAX];
};

/* -1 when the marker is missing, a limit is passed or memory runs out. */
int parts_split(struct parts *p, const char *schema);
void parts_free(struct parts *p);

#endif
