/*
 * listen: see listen.h.
 */
#include "config.h"

#include "common/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
split_spec(const char *spec, char *host, size_t hostlen, char *port, size_t portlen)
{
    const char *colon;
    const char *h = spec;
    size_t hl;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (close == NULL)
            return -1;
        h = spec + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(spec, ':');
        if (colon == NULL)
            return -1;
        hl = (size_t)(colon - spec);
    }
    if (*colon != ':' || hl >= hostlen || strlen(colon + 1) >= portlen)
        return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    snprintf(port, portlen, "%s", colon + 1);
    return 0;
}

static void
name_of(const struct sockaddr_storage *ss, char *out, size_t outlen)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
        port = ntohs(sin->sin_port);
        snprintf(out, outlen, "%s:%d", host, port);
    } else {
        const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
        port = ntohs(sin6->sin6_port);
        snprintf(out, outlen, "[%s]:%d", host, port);
    }
}

static int
bound_socket(const struct sockaddr *sa, socklen_t len, int reuseport, char *err, size_t errlen,
             const char *what)
{
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "%s: socket: %s", what, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (reuseport && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
        snprintf(err, errlen, "%s: SO_REUSEPORT: %s", what, strerror(errno));
        close(fd);
        return -1;
    }
    if (sa->sa_family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, sa, len) < 0) {
        snprintf(err, errlen, "%s: bind: %s", what, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int
listen_open(struct listener_set *ls, const struct config *c, char *err, size_t errlen)
{
    memset(ls, 0, sizeof(*ls));
    ls->reuseport = c->reuseport;
    for (int i = 0; i < c->nlisten; i++) {
        struct listener *l = &ls->l[i];
        char host[256], port[16];
        l->fd = -1;
        if (split_spec(c->listen[i], host, sizeof(host), port, sizeof(port)) < 0) {
            snprintf(err, errlen, "%s: not HOST:PORT", c->listen[i]);
            goto fail;
        }
        struct addrinfo hints = {0}, *res = NULL;
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
        int gai = getaddrinfo(*host ? host : NULL, port, &hints, &res);
        if (gai != 0) {
            snprintf(err, errlen, "%s: %s", c->listen[i], gai_strerror(gai));
            goto fail;
        }
        l->fd = bound_socket(res->ai_addr, res->ai_addrlen, c->reuseport, err, errlen,
                             c->listen[i]);
        freeaddrinfo(res);
        ls->n = i + 1;
        if ((l->spec = strdup(c->listen[i])) == NULL) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        if (l->fd < 0)
            goto fail;
        l->addrlen = sizeof(l->addr);
        if (getsockname(l->fd, (struct sockaddr *)&l->addr, &l->addrlen) < 0) {
            snprintf(err, errlen, "%s: getsockname: %s", c->listen[i], strerror(errno));
            goto fail;
        }
        name_of(&l->addr, l->name, sizeof(l->name));
        if (!c->reuseport && listen(l->fd, LISTEN_BACKLOG) < 0) {
            snprintf(err, errlen, "%s: listen: %s", c->listen[i], strerror(errno));
            goto fail;
        }
    }
    return 0;
fail:
    listen_close(ls);
    return -1;
}

void
listen_close(struct listener_set *ls)
{
    for (int i = 0; i < ls->n; i++) {
        if (ls->l[i].fd >= 0)
            close(ls->l[i].fd);
        ls->l[i].fd = -1;
        free(ls->l[i].spec);
        ls->l[i].spec = NULL;
    }
    ls->n = 0;
}

int
listen_same(const struct listener_set *ls, const struct config *c)
{
    if (ls->n != c->nlisten || ls->reuseport != c->reuseport)
        return 0;
    for (int i = 0; i < ls->n; i++)
        if (strcmp(ls->l[i].spec, c->listen[i]) != 0)
            return 0;
    return 1;
}

int
listen_reuseport_socket(const struct listener *l)
{
    char err[256];
    int fd = bound_socket((const struct sockaddr *)&l->addr, l->addrlen, 1, err, sizeof(err),
                          l->name);
    if (fd < 0) {
        errno = EADDRINUSE;
        return -1;
    }
    if (listen(fd, LISTEN_BACKLOG) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}
