/*
 * routes: the route table.  Order matters where a literal segment and a
 * parameter could both fit: the literal comes first (see router.h).
 */
#include "config.h"

#include "worker/routes.h"

#include "worker/api.h"
#include "worker/health.h"

#define H(f) ((void (*)(void))(f))

const struct route routes[] = {
    {ROUTER_GET, "/healthz", H(health_get)},

    {ROUTER_POST, "/api/users/login", H(api_users_login)},
    {ROUTER_POST, "/api/users", H(api_users_register)},
    {ROUTER_GET, "/api/user", H(api_user_get)},
    {ROUTER_PUT, "/api/user", H(api_user_update)},

    {ROUTER_GET, "/api/profiles/:username", H(api_profile_get)},
    {ROUTER_POST, "/api/profiles/:username/follow", H(api_profile_follow)},
    {ROUTER_DELETE, "/api/profiles/:username/follow", H(api_profile_unfollow)},

    {ROUTER_GET, "/api/articles/feed", H(api_articles_feed)},
    {ROUTER_GET, "/api/articles", H(api_articles_list)},
    {ROUTER_POST, "/api/articles", H(api_article_create)},
    {ROUTER_GET, "/api/articles/:slug", H(api_article_get)},
    {ROUTER_PUT, "/api/articles/:slug", H(api_article_update)},
    {ROUTER_DELETE, "/api/articles/:slug", H(api_article_delete)},
    {ROUTER_POST, "/api/articles/:slug/favorite", H(api_article_favorite)},
    {ROUTER_DELETE, "/api/articles/:slug/favorite", H(api_article_unfavorite)},
    {ROUTER_GET, "/api/articles/:slug/comments", H(api_comments_list)},
    {ROUTER_POST, "/api/articles/:slug/comments", H(api_comment_create)},
    {ROUTER_DELETE, "/api/articles/:slug/comments/:id", H(api_comment_delete)},

    {ROUTER_GET, "/api/tags", H(api_tags_list)},

#ifdef CONDUITD_TEST_HOOKS
    {ROUTER_GET, "/debug/sleep", H(debug_sleep)},
    {ROUTER_GET, "/debug/spin", H(debug_spin)},
#endif
};

const size_t nroutes = sizeof(routes) / sizeof(routes[0]);
