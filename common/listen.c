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

/*
 * The sockets passed by the process that started this one.  The
 * environment they come from is the process's own, read once at start:
 * this is the one place that keeps them.
 */
#define LISTEN_FDS_START 3
#define INHERITED_MAX 64

static struct {
    int n;
    int fd[INHERITED_MAX];
    int listening[INHERITED_MAX]; /* 0: a reuseport master's reservation (see listen_pass) */
    char name[INHERITED_MAX][32]; /* its LISTEN_FDNAMES entry, "" when none */
    struct sockaddr_storage addr[INHERITED_MAX];
    socklen_t addrlen[INHERITED_MAX];
} inherited;

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

static int
same_address(const struct sockaddr *a, const struct sockaddr_storage *b)
{
    if (a->sa_family != b->ss_family)
        return 0;
    if (a->sa_family == AF_INET) {
        const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    if (a->sa_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
        return x->sin6_port == y->sin6_port &&
               memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
    }
    return 0;
}

static int
port_of(const struct sockaddr *a)
{
    if (a->sa_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)(const void *)a)->sin_port);
    if (a->sa_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)(const void *)a)->sin6_port);
    return -1;
}

/* The same host address, whatever the ports. */
static int
same_host(const struct sockaddr *a, const struct sockaddr_storage *b)
{
    struct sockaddr_storage x;

    memcpy(&x, b, sizeof(x));
    if (x.ss_family == AF_INET)
        ((struct sockaddr_in *)&x)->sin_port =
            ((const struct sockaddr_in *)(const void *)a)->sin_port;
    else if (x.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&x)->sin6_port =
            ((const struct sockaddr_in6 *)(const void *)a)->sin6_port;
    return same_address(a, &x);
}

/*
 * The inherited socket bound to sa, taken from the list; -1 when none is.
 * An address with port 0 ("any port") has no socket of its own to match:
 * it takes the one a master passed for it at an upgrade, named by the role
 * (LISTEN_NAME_HTTP, LISTEN_NAME_STATUS) on the same host, so that the new
 * master serves on the port the old one was given by the kernel.
 */
static int
take_inherited(const struct sockaddr *sa, const char *role, int *listening)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < inherited.n; i++) {
            int fd = inherited.fd[i];
            if (fd < 0)
                continue;
            if (pass == 0 ? !same_address(sa, &inherited.addr[i])
                          : port_of(sa) != 0 || strcmp(inherited.name[i], role) != 0 ||
                                !same_host(sa, &inherited.addr[i]))
                continue;
            inherited.fd[i] = -1;
            *listening = inherited.listening[i];
            return fd;
        }
    }
    return -1;
}

/* The i-th name of LISTEN_FDNAMES (colon-separated) into out; "" when absent. */
static void
fd_name(const char *names, int i, char *out, size_t outlen)
{
    const char *p = names;

    out[0] = '\0';
    for (; p && i > 0; i--) {
        p = strchr(p, ':');
        if (p)
            p++;
    }
    if (p)
        snprintf(out, outlen, "%.*s", (int)strcspn(p, ":"), p);
}

/* A bound stream socket that reserves a port with SO_REUSEPORT and does not listen. */
static int
is_reuseport_reservation(int fd)
{
    int on = 0;
    socklen_t l = sizeof(on);

    return getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, &l) == 0 && on;
}

int
listen_inherit(char *err, size_t errlen)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    char names[INHERITED_MAX * 32] = "";
    char *end;
    long n;

    inherited.n = 0;
    if (!pid || !fds)
        return 0;
    errno = 0;
    if (strtol(pid, &end, 10) != (long)getpid() || *end || errno)
        return 0; /* meant for another process (an ancestor's) */
    n = strtol(fds, &end, 10);
    if (*end || n < 0 || n > INHERITED_MAX) {
        snprintf(err, errlen, "LISTEN_FDS=%s: not a count of sockets (0 to %d)", fds,
                 INHERITED_MAX);
        return -1;
    }
    if (getenv("LISTEN_FDNAMES"))
        snprintf(names, sizeof(names), "%s", getenv("LISTEN_FDNAMES"));
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    for (int i = 0; i < n; i++) {
        int fd = LISTEN_FDS_START + i, type = 0, acc = 0;
        socklen_t tl = sizeof(type), al = sizeof(acc);
        inherited.addrlen[i] = sizeof(inherited.addr[i]);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM ||
            getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) < 0 ||
            (!acc && !is_reuseport_reservation(fd)) ||
            getsockname(fd, (struct sockaddr *)&inherited.addr[i], &inherited.addrlen[i]) < 0) {
            snprintf(err, errlen, "LISTEN_FDS: descriptor %d is not a listening stream socket", fd);
            return -1;
        }
        inherited.listening[i] = acc;
        fd_name(names, i, inherited.name[i], sizeof(inherited.name[i]));
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        inherited.fd[i] = fd;
        inherited.n = i + 1;
    }
    return (int)n;
}

int
listen_inherited_unused(char *names, size_t len)
{
    int unused = 0;
    size_t o = 0;

    if (len)
        names[0] = '\0';
    for (int i = 0; i < inherited.n; i++) {
        char name[64];
        if (inherited.fd[i] < 0)
            continue;
        name_of(&inherited.addr[i], name, sizeof(name));
        if (o < len)
            o += (size_t)snprintf(names + o, len - o, "%s%s", unused ? ", " : "", name);
        close(inherited.fd[i]);
        inherited.fd[i] = -1;
        unused++;
    }
    return unused;
}

/*
 * Binds (and unless reuseport, listens on) spec into l, or takes the
 * inherited socket bound to its address; err says why not.
 */
static int
open_one(struct listener *l, const char *spec, int reuseport, const char *what, const char *role,
         char *err, size_t errlen)
{
    char host[256], port[16], label[300];
    struct addrinfo hints = {0}, *res = NULL;
    int gai, listening = 0;

    snprintf(label, sizeof(label), "%s%s", what, spec);
    l->fd = -1;
    if (split_spec(spec, host, sizeof(host), port, sizeof(port)) < 0) {
        snprintf(err, errlen, "%s: not HOST:PORT", label);
        return -1;
    }
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    gai = getaddrinfo(*host ? host : NULL, port, &hints, &res);
    if (gai != 0) {
        snprintf(err, errlen, "%s: %s", label, gai_strerror(gai));
        return -1;
    }
    l->fd = take_inherited(res->ai_addr, role, &listening);
    l->inherited = l->fd >= 0;
    if (l->inherited && reuseport && listening) {
        snprintf(err, errlen, "%s: reuseport cannot share a socket passed in LISTEN_FDS", label);
        close(l->fd);
        l->fd = -1;
    } else if (l->inherited && !reuseport && !listening) {
        snprintf(err, errlen,
                 "%s: the socket passed in LISTEN_FDS is a reuseport one (it does not "
                 "listen): reuseport changed, which needs a restart",
                 label);
        close(l->fd);
        l->fd = -1;
    } else if (!l->inherited) {
        l->fd = bound_socket(res->ai_addr, res->ai_addrlen, reuseport, err, errlen, label);
    }
    freeaddrinfo(res);
    if ((l->spec = strdup(spec)) == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (l->fd < 0)
        return -1;
    l->addrlen = sizeof(l->addr);
    if (getsockname(l->fd, (struct sockaddr *)&l->addr, &l->addrlen) < 0) {
        snprintf(err, errlen, "%s: getsockname: %s", label, strerror(errno));
        return -1;
    }
    name_of(&l->addr, l->name, sizeof(l->name));
    if (!reuseport && !l->inherited && listen(l->fd, LISTEN_BACKLOG) < 0) {
        snprintf(err, errlen, "%s: listen: %s", label, strerror(errno));
        return -1;
    }
    return 0;
}

int
listen_open(struct listener_set *ls, const struct config *c, char *err, size_t errlen)
{
    memset(ls, 0, sizeof(*ls));
    ls->reuseport = c->reuseport;
    for (int i = 0; i < c->nlisten; i++) {
        ls->n = i + 1;
        if (open_one(&ls->l[i], c->listen[i], c->reuseport, "", LISTEN_NAME_HTTP, err, errlen) < 0)
            goto fail;
    }
    return 0;
fail:
    listen_close(ls);
    return -1;
}

int
listen_open_status(struct listener *l, const char *spec, char *err, size_t errlen)
{
    memset(l, 0, sizeof(*l));
    l->fd = -1;
    if (!spec || strcmp(spec, "off") == 0)
        return 0;
    if (open_one(l, spec, 0, "status_listen ", LISTEN_NAME_STATUS, err, errlen) < 0) {
        listen_close_one(l);
        return -1;
    }
    return 0;
}

void
listen_close_one(struct listener *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
    free(l->spec);
    l->spec = NULL;
}

void
listen_close(struct listener_set *ls)
{
    for (int i = 0; i < ls->n; i++)
        listen_close_one(&ls->l[i]);
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
    int fd =
        bound_socket((const struct sockaddr *)&l->addr, l->addrlen, 1, err, sizeof(err), l->name);
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

/* Adds fd to the list of descriptors to pass; -1 when it is full. */
static int
pass_add(int *fds, char *names, size_t nameslen, int *n, int fd, const char *name)
{
    size_t o = strlen(names);

    if (*n >= INHERITED_MAX)
        return -1;
    fds[(*n)++] = fd;
    snprintf(names + o, nameslen - o, "%s%s", o ? ":" : "", name);
    return 0;
}

int
listen_pass(const struct listener_set *ls, const struct listener *status)
{
    int fds[INHERITED_MAX], tmp[INHERITED_MAX], n = 0;
    char names[INHERITED_MAX * 8] = "", num[32];

    for (int i = 0; i < ls->n; i++)
        if (ls->l[i].fd >= 0 &&
            pass_add(fds, names, sizeof(names), &n, ls->l[i].fd, LISTEN_NAME_HTTP) < 0)
            return -1;
    if (status && status->fd >= 0 &&
        pass_add(fds, names, sizeof(names), &n, status->fd, LISTEN_NAME_STATUS) < 0)
        return -1;
    /*
     * First above every target (a socket may already sit where another
     * must go), then each to its place: dup2 leaves FD_CLOEXEC off the
     * copy, so these alone cross the exec.
     */
    for (int i = 0; i < n; i++)
        if ((tmp[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, LISTEN_FDS_START + n)) < 0)
            return -1;
    for (int i = 0; i < n; i++) {
        if (dup2(tmp[i], LISTEN_FDS_START + i) < 0)
            return -1;
        close(tmp[i]);
    }
    snprintf(num, sizeof(num), "%d", n);
    if (setenv("LISTEN_FDS", num, 1) < 0 || setenv("LISTEN_FDNAMES", names, 1) < 0)
        return -1;
    snprintf(num, sizeof(num), "%ld", (long)getpid());
    return setenv("LISTEN_PID", num, 1) < 0 ? -1 : n;
}
