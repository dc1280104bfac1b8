/*
 * cache_articles: what the cache (worker/cache.h) keeps of articles, list
 * pages and a viewer's flags, how an answer is made from them, and which
 * keys a write changes (docs/caching.md).
 *
 * Values, kept once each so that a write touches one entry:
 *   a:<slug>     an article: its id, its author's id, its favoritesCount
 *                and its JSON without the viewer's two flags (the body
 *                only once a single-article read brought it).  It
 *                depends on u:<author id>: the author's profile is in it.
 *   v:<viewer>   the sorted ids of the articles the viewer favorited (or
 *                a mark: too many to keep).
 *   f:<viewer>   the sorted ids the viewer follows (api_profiles.c's).
 *   page keys    a list page: its articlesCount and its slugs.
 *                L|<limit>|<offset>          depends on lg, ld
 *                T|<limit>|<offset>|<tag>    lt:<tag>, lt, ld
 *                A|<limit>|<offset>|<user>   la:<user>, p:<user>, ld
 *                F|<limit>|<offset>|<user>   lf:<user>, p:<user>, ld
 *                D|<limit>|<offset>|<viewer> f:<viewer>, ld, and
 *                                            aa:<id> of every followee
 * Change keys (invalidated, never holding a value): lg (an article was
 * added), ld (one was deleted), lt (some article's tags were rewritten),
 * lt:<tag>, la:<username>, lf:<username>, aa:<author id>.
 *
 * A page is answered from the cache only when the page, each of its
 * articles and (for a signed-in viewer) both sets are held and fresh;
 * otherwise the list's statement runs as without a cache and its rows
 * fill what they can.  Two filters at once are never cached.
 */
#ifndef CONDUITD_CACHE_ARTICLES_H
#define CONDUITD_CACHE_ARTICLES_H

#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

struct cache;
struct cache_stale;
struct evbuffer;

/* The most ids a viewer's set holds (the viewer_sets query's $2). */
#define CACHE_SET_MAX 1000
#define CACHE_SET_MAX_TEXT "1000"

enum cache_list {
    CACHE_LIST_ALL,
    CACHE_LIST_TAG,
    CACHE_LIST_AUTHOR,
    CACHE_LIST_FAVORITED,
    CACHE_LIST_FEED
};

/* What the viewer follows and favorited; both NULL for nobody signed in. */
struct cache_viewer {
    const int64_t *follows, *favorites;
    size_t nfollows, nfavorites;
};

/* Comma-separated ids ("1,5,9") into ids (sorted); their number, or -1 if malformed or over max. */
int cache_ids_parse(const char *s, int64_t *ids, size_t max);
/* Does a sorted set of n ids hold id? */
int cache_ids_has(const int64_t *ids, size_t n, int64_t id);

/*
 * The sets of a signed-in viewer: 1 both held (*out filled, with the
 * cache's copies: valid until cache_release()), 0 one is missing (send
 * viewer_sets, then cache_fill_viewer()), -1 the viewer has too many to
 * keep (answer from the database).
 */
int cache_viewer_get(struct cache *k, int64_t viewer, struct cache_viewer *out);
void cache_fill_viewer(struct cache *k, int64_t viewer, const PGresult *res, uint64_t epoch);

/*
 * For a read sent without the flags' viewer (sql/queries.sql): 1 with
 * *out filled when the cache is on and holds both sets of the signed-in
 * viewer, fresh; else 0.  It takes cache_release() first (the copies
 * handed out before are dead: call it before any other lookup of the
 * answer, as a request's first lookup).
 */
int cache_viewer_now(struct cache *k, int64_t viewer, struct cache_viewer *out);
/* The viewer's two flags for an article: flags[0] favorited, flags[1] following its author. */
void cache_viewer_flags(const struct cache_viewer *v, int64_t article, int64_t author,
                        int flags[2]);

/* A page's key into key[CACHE_KEY_MAX]; -1 when it cannot have one. */
int cache_page_key(enum cache_list kind, const char *filter, int64_t viewer, const char *limit,
                   const char *offset, char *key);

/*
 * The page's articles from the cache, joined by commas, into b, and its
 * count; 1 when written, 0 on any miss (b untouched).  stale: the page
 * and its articles may be stale, as cache_get_stale() says (NULL: fresh only).
 */
int cache_page_render(struct cache *k, const char *key, const struct cache_viewer *v,
                      struct evbuffer *b, int64_t *count, struct cache_stale *stale);

/* Fills the page and its articles from a list result (columns in sql/queries.sql). */
void cache_page_fill(struct cache *k, const char *key, enum cache_list kind, const char *filter,
                     int64_t viewer, const PGresult *res, uint64_t epoch);

/* One article with its body from the cache into b; 1 when written, 0 on a miss.  stale: as above.
 */
int cache_article_render(struct cache *k, const char *slug, const struct cache_viewer *v,
                         struct evbuffer *b, struct cache_stale *stale);

/* Fills a:<slug> from row 0 of article_get (with its body). */
void cache_article_fill(struct cache *k, const PGresult *res, uint64_t epoch);

/*
 * A write this worker made and is about to answer: invalidates what it
 * changed, for every worker of the instance (the other instances hear it
 * from PostgreSQL).  res is the write's row (article columns, 8 the
 * author's name; favorite's 16 viewer_name).
 */
void cache_wrote_favorite(struct cache *k, const PGresult *res, int64_t viewer);
void cache_wrote_article(struct cache *k, const PGresult *res, int64_t author, const char *old_slug,
                         int tags_changed);
void cache_wrote_delete(struct cache *k, const char *slug);

#endif
