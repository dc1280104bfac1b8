/*
 * servers: see servers.h.
 */
#include "config.h"

#include "bench/servers.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/conn.h"

#define READY_TIMEOUT_S 60
#define STOP_GRACE_S 30
#define SERVER_NOFILE 1048576
/* Descriptors an nginx worker keeps besides its clients: upstreams, logs. */
#define NGINX_SPARE 2048
/* conduitd's own default for --max-connections (per worker). */
#define CONDUITD_MAX_CONNECTIONS 10000

int
servers_find(const char *name, const char *const *dirs, char *out, size_t cap)
{
    const char *path = getenv("PATH");
    char buf[8192];

    if (strchr(name, '/')) {
        snprintf(out, cap, "%s", name);
        return access(out, X_OK);
    }
    for (int i = 0; dirs && dirs[i]; i++) {
        snprintf(out, cap, "%s/%s", dirs[i], name);
        if (access(out, X_OK) == 0)
            return 0;
    }
    snprintf(buf, sizeof(buf), "%s", path ? path : "/usr/sbin:/usr/bin:/sbin:/bin");
    for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(out, cap, "%s/%s", d, name);
        if (access(out, X_OK) == 0)
            return 0;
    }
    return -1;
}

static void
cpus(int n, cpu_set_t *set)
{
    long all = sysconf(_SC_NPROCESSORS_ONLN);

    CPU_ZERO(set);
    for (int i = 0; i < (n > 0 ? n : all); i++)
        CPU_SET(i, set);
}

/* Every thread of pid, then its children, recursively. */
int
servers_pin(pid_t pid, int n)
{
    char path[64];
    cpu_set_t set;
    DIR *d;
    struct dirent *de;
    int rc = 0;

    cpus(n, &set);
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return -1;
    while ((de = readdir(d))) {
        char cpath[300];
        FILE *f;
        int child;

        if (de->d_name[0] == '.')
            continue;
        if (sched_setaffinity(atoi(de->d_name), sizeof(set), &set) < 0)
            rc = -1;
        snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", (int)pid, de->d_name);
        if (!(f = fopen(cpath, "r")))
            continue;
        while (fscanf(f, "%d", &child) == 1)
            servers_pin(child, n);
        fclose(f);
    }
    closedir(d);
    return rc;
}

/* Forks and execs argv with stdout and stderr to log, pinned, with many fds. */
static pid_t
spawn(char *const argv[], const char *log, int cores)
{
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        cpu_set_t set;

        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        close(0);
        open("/dev/null", O_RDONLY);
        bench_raise_nofile(SERVER_NOFILE); /* else as far as the hard limit goes */
        signal(SIGPIPE, SIG_DFL);
        if (cores) {
            cpus(cores, &set);
            sched_setaffinity(0, sizeof(set), &set);
        }
        setpgid(0, 0); /* a Ctrl-C on the bench does not reach it twice */
        execv(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
}

/*
 * 200 from GET path on 127.0.0.1:port.  s->probes counts the probes
 * conduitd answered, which its own count of responses includes: every
 * answer from a master, and only a 200 through nginx (its 502 or 504 is
 * nginx's own).  The timeout is long enough that a loaded machine answers
 * before it: a probe given up on might still be answered, and counted by
 * the server alone.
 */
static int
probe(struct servers *s, int port, const char *path, int via_nginx)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct timeval tv = {5, 0};
    char req[256], buf[64];
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok = 0;
    ssize_t n;

    if (fd < 0)
        return 0;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
             path);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        send(fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req) &&
        (n = recv(fd, buf, sizeof(buf) - 1, 0)) > 12) {
        buf[n] = '\0';
        ok = strncmp(buf + 9, "200", 3) == 0;
        if (ok || !via_nginx)
            s->probes++;
    }
    close(fd);
    return ok;
}

static int
log_says(const char *log, const char *what)
{
    FILE *f = fopen(log, "r");
    char line[1024];
    int found = 0;

    if (!f)
        return 0;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, what) != NULL;
    fclose(f);
    return found;
}

/*
 * A port the kernel says is free now (bound to port 0, then released).
 * Another process could take it before nginx binds it: nginx then fails
 * to start, and says so.
 */
static int
free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* The port a master logged ("listening on 127.0.0.1:PORT"), or 0. */
static int
logged_port(const char *log)
{
    FILE *f = fopen(log, "r");
    char line[1024];
    int port = 0;

    if (!f)
        return 0;
    while (!port && fgets(line, sizeof(line), f)) {
        const char *p = strstr(line, "listening on 127.0.0.1:");

        if (p)
            port = atoi(p + strlen("listening on 127.0.0.1:"));
    }
    fclose(f);
    return port;
}

static int
alive(pid_t pid)
{
    return waitpid(pid, NULL, WNOHANG) == 0;
}

static void
nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};

    nanosleep(&ts, NULL);
}

int
servers_nginx_workers(const struct servers_cfg *c, long nofile)
{
    int cores = c->cores ? c->cores : (int)sysconf(_SC_NPROCESSORS_ONLN);
    long per = nofile - NGINX_SPARE;
    int need = per > 0 ? (int)((c->clients + per - 1) / per) : 1;

    return need > cores ? need : cores;
}

int
servers_max_connections(const struct servers_cfg *c)
{
    int per = (c->clients + c->workers - 1) / c->workers;

    /* A tenth to spare: the kernel does not spread connections evenly. */
    per += per / 10;
    return per > CONDUITD_MAX_CONNECTIONS ? per : CONDUITD_MAX_CONNECTIONS;
}

/* nginx.conf around the upstream template: one server line per instance. */
static int
write_nginx_conf(const struct servers_cfg *c, const struct servers *s, const char *conf, char *err,
                 size_t errlen)
{
    FILE *in = fopen(c->nginx_tmpl, "r"), *out;
    char line[1024];
    struct rlimit rl = {0, 0};
    long nofile;
    int workers;

    if (!in) {
        snprintf(err, errlen, "%s: %s", c->nginx_tmpl, strerror(errno));
        return -1;
    }
    if (!(out = fopen(conf, "w"))) {
        snprintf(err, errlen, "%s: %s", conf, strerror(errno));
        fclose(in);
        return -1;
    }
    /* What a worker will get: the hard limit, unless root may raise it. */
    getrlimit(RLIMIT_NOFILE, &rl);
    nofile = geteuid() == 0 && rl.rlim_max < SERVER_NOFILE ? SERVER_NOFILE : (long)rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &(struct rlimit){rl.rlim_cur, (rlim_t)nofile}) < 0)
        nofile = (long)rl.rlim_max;
    else
        setrlimit(RLIMIT_NOFILE, &rl);
    workers = servers_nginx_workers(c, nofile);
    fprintf(out,
            "# Made by conduit-bench compare from %s.\n"
            "# %d workers of %ld descriptors each for up to %d clients.\n"
            "worker_processes %d;\npid %s/nginx.pid;\nerror_log %s/nginx-error.log warn;\n"
            "worker_rlimit_nofile %ld;\n"
            "events { worker_connections 65536; multi_accept on; }\n"
            "http {\n  access_log off;\n  client_body_temp_path %s/nginx-tmp;\n"
            "  proxy_temp_path %s/nginx-tmp;\n",
            c->nginx_tmpl, workers, nofile, c->clients, workers, c->dir, c->dir, nofile, c->dir,
            c->dir);
    while (fgets(line, sizeof(line), in)) {
        if (strstr(line, "@UPSTREAM_SERVERS@")) {
            for (int i = 0; i < s->n; i++)
                fprintf(out, "\tserver 127.0.0.1:%d max_fails=3 fail_timeout=10s;\n", s->port[i]);
        } else if (strstr(line, "listen [::]:80;")) {
            continue;
        } else if (strstr(line, "listen 80;")) {
            /* reuseport: the kernel spreads clients evenly, so no worker hits its limit first. */
            fprintf(out, "\tlisten 127.0.0.1:%d backlog=65535%s;\n", s->target_port,
                    workers > 1 ? " reuseport" : "");
        } else {
            fputs(line, out);
        }
    }
    fprintf(out, "}\n");
    fclose(in);
    return fclose(out) == 0 ? 0 : -1;
}

static int
start_nginx(const struct servers_cfg *c, struct servers *s, char *err, size_t errlen)
{
    char conf[4096], tmp[4096], log[4096], nginx[4096];
    char *argv[10];
    int i;

    if (servers_find(c->nginx ? c->nginx : "nginx", (const char *const[]){"/usr/sbin", NULL}, nginx,
                     sizeof(nginx)) < 0) {
        snprintf(err, errlen, "nginx not found (apt-get install nginx-light, or --nginx PATH)");
        return -1;
    }
    snprintf(conf, sizeof(conf), "%s/nginx.conf", c->dir);
    snprintf(tmp, sizeof(tmp), "%s/nginx-tmp", c->dir);
    snprintf(log, sizeof(log), "%s/nginx.out", c->dir);
    mkdir(tmp, 0755);
    s->target_port = c->base_port ? c->base_port : free_port();
    if (s->target_port <= 0) {
        snprintf(err, errlen, "no free loopback port for nginx");
        return -1;
    }
    if (write_nginx_conf(c, s, conf, err, errlen) < 0)
        return -1;
    argv[0] = nginx;
    argv[1] = "-p";
    argv[2] = (char *)c->dir;
    argv[3] = "-c";
    argv[4] = conf;
    argv[5] = "-g";
    argv[6] = "daemon off;";
    argv[7] = "-e"; /* not the system's error log, before the config is read */
    argv[8] = "stderr";
    argv[9] = NULL;
    if ((s->nginx = spawn(argv, log, c->cores)) < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    for (i = 0; i < READY_TIMEOUT_S * 10 && !probe(s, s->target_port, "/api/tags", 1); i++) {
        if (!alive(s->nginx)) {
            snprintf(err, errlen, "nginx exited at start: see %s", log);
            s->nginx = 0;
            return -1;
        }
        nap_ms(100);
    }
    if (i == READY_TIMEOUT_S * 10) {
        snprintf(err, errlen, "nginx does not answer on port %d: see %s", s->target_port, log);
        return -1;
    }
    return 0;
}

static int
start_master(const struct servers_cfg *c, struct servers *s, int k, char *err, size_t errlen)
{
    char listen[64], workers[16], pool[16], maxconn[16], *argv[24];
    int a = 0, i;

    /* Port 0 lets the kernel pick a free one; the master logs it. */
    s->port[k] = c->base_port ? c->base_port + 1 + k : 0;
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", s->port[k]);
    snprintf(workers, sizeof(workers), "%d", c->workers / c->instances);
    snprintf(pool, sizeof(pool), "%d", c->pool);
    snprintf(s->log[k], sizeof(s->log[k]), "%s/conduitd-w%d-i%d.log", c->dir, c->workers, k);
    unlink(s->log[k]);
    argv[a++] = (char *)c->conduitd;
    argv[a++] = "-b";
    argv[a++] = listen;
    argv[a++] = "-w";
    argv[a++] = workers;
    argv[a++] = "--pool";
    argv[a++] = pool;
    /* Only above conduitd's default: the users of a direct layout must fit. */
    if (c->instances == 1 && servers_max_connections(c) > CONDUITD_MAX_CONNECTIONS) {
        snprintf(maxconn, sizeof(maxconn), "%d", servers_max_connections(c));
        argv[a++] = "--max-connections";
        argv[a++] = maxconn;
    }
    argv[a++] = "--db";
    argv[a++] = (char *)c->db;
    argv[a++] = "--log";
    argv[a++] = s->log[k];
    if (c->reuseport)
        argv[a++] = "--reuseport";
    if (c->cache) {
        argv[a++] = "--cache";
        argv[a++] = "on";
    }
    if (!getenv("CONDUITD_JWT_SECRET"))
        argv[a++] = "--dev"; /* a published secret, for a benchmark on loopback only */
    if (geteuid() == 0)
        argv[a++] = "--allow-root";
    argv[a] = NULL;
    if ((s->master[k] = spawn(argv, s->log[k], c->cores)) < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        s->master[k] = 0;
        return -1;
    }
    s->n = k + 1;
    for (i = 0; i < READY_TIMEOUT_S * 10; i++) {
        if (!s->port[k])
            s->port[k] = logged_port(s->log[k]);
        if (s->port[k] && log_says(s->log[k], "worker(s) ready") &&
            probe(s, s->port[k], "/healthz", 0))
            return 0;
        if (!alive(s->master[k])) {
            snprintf(err, errlen, "conduitd exited at start: see %s", s->log[k]);
            s->master[k] = 0;
            return -1;
        }
        nap_ms(100);
    }
    snprintf(err, errlen, "conduitd not ready after %d s: see %s", READY_TIMEOUT_S, s->log[k]);
    return -1;
}

int
servers_start(const struct servers_cfg *c, struct servers *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    if (c->instances < 1 || c->instances > SERVERS_MAX || c->workers % c->instances) {
        snprintf(err, errlen, "%d workers do not divide among %d instances", c->workers,
                 c->instances);
        return -1;
    }
    for (int k = 0; k < c->instances; k++)
        if (start_master(c, s, k, err, errlen) < 0)
            return -1;
    s->target_port = s->port[0];
    if (c->instances > 1 && start_nginx(c, s, err, errlen) < 0)
        return -1;
    return 0;
}

static void
stop_one(pid_t *pid)
{
    if (*pid <= 0)
        return;
    kill(*pid, SIGTERM);
    for (int i = 0; i < STOP_GRACE_S * 10; i++) {
        if (waitpid(*pid, NULL, WNOHANG) != 0) {
            *pid = 0;
            return;
        }
        nap_ms(100);
    }
    kill(*pid, SIGKILL);
    waitpid(*pid, NULL, 0);
    *pid = 0;
}

void
servers_stop(struct servers *s)
{
    stop_one(&s->nginx);
    for (int k = 0; k < s->n; k++)
        stop_one(&s->master[k]);
}
