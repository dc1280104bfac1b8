/*
 * routes: the route table.  Order matters where a literal segment and a
 * parameter could both fit: the literal comes first (see router.h).  The
 * last column says what the route makes of the caller's token
 * (worker/auth.h): checked once, before the handler, by api_gate(); a
 * handler finds the caller in api_req(c)->user_id.  GET /api/tags reads no token:
 * its answer is the same for everyone (but for a stale answer, which looks
 * at the token quietly to never give one to its writer: api_cache_stale()).
 */
#include "config.h"

#include "worker/routes.h"

#include "worker/api.h"
#include "worker/auth.h"
#include "worker/health.h"

#define H(f) ((void (*)(void))(f))

const struct route routes[] = {
    {ROUTER_GET, "/healthz", H(health_get), AUTH_NONE},

    {ROUTER_POST, "/api/users/login", H(api_users_login), AUTH_NONE},
    {ROUTER_POST, "/api/users", H(api_users_register), AUTH_NONE},
    {ROUTER_GET, "/api/user", H(api_user_get), AUTH_REQUIRED},
    {ROUTER_PUT, "/api/user", H(api_user_update), AUTH_REQUIRED},

    {ROUTER_GET, "/api/profiles/:username", H(api_profile_get), AUTH_OPTIONAL},
    {ROUTER_POST, "/api/profiles/:username/follow", H(api_profile_follow), AUTH_REQUIRED},
    {ROUTER_DELETE, "/api/profiles/:username/follow", H(api_profile_unfollow), AUTH_REQUIRED},

    {ROUTER_GET, "/api/articles/feed", H(api_articles_feed), AUTH_REQUIRED},
    {ROUTER_GET, "/api/articles", H(api_articles_list), AUTH_OPTIONAL},
    {ROUTER_POST, "/api/articles", H(api_article_create), AUTH_REQUIRED},
    {ROUTER_GET, "/api/articles/:slug", H(api_article_get), AUTH_OPTIONAL},
    {ROUTER_PUT, "/api/articles/:slug", H(api_article_update), AUTH_REQUIRED},
    {ROUTER_DELETE, "/api/articles/:slug", H(api_article_delete), AUTH_REQUIRED},
    {ROUTER_POST, "/api/articles/:slug/favorite", H(api_article_favorite), AUTH_REQUIRED},
    {ROUTER_DELETE, "/api/articles/:slug/favorite", H(api_article_unfavorite), AUTH_REQUIRED},
    {ROUTER_GET, "/api/articles/:slug/comments", H(api_comments_list), AUTH_OPTIONAL},
    {ROUTER_POST, "/api/articles/:slug/comments", H(api_comment_create), AUTH_REQUIRED},
    {ROUTER_DELETE, "/api/articles/:slug/comments/:id", H(api_comment_delete), AUTH_REQUIRED},

    {ROUTER_GET, "/api/tags", H(api_tags_list), AUTH_NONE},

#ifdef CONDUITD_TEST_HOOKS
    {ROUTER_GET, "/debug/sleep", H(debug_sleep), AUTH_NONE},
    {ROUTER_GET, "/debug/spin", H(debug_spin), AUTH_NONE},
    {ROUTER_GET, "/debug/cache-die", H(debug_cache_die), AUTH_NONE},
#endif
};

const size_t nroutes = sizeof(routes) / sizeof(routes[0]);
