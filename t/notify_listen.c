/*
 * notify_listen SOCKET: a stand-in for systemd's notification socket, for
 * t/integration/notify.sh.  Binds a unix datagram socket at SOCKET (a
 * path, or "@name" in the abstract namespace, as $NOTIFY_SOCKET names
 * them) and prints each datagram it receives on one line, its "KEY=value"
 * lines joined by " | ", prefixed with the sender's pid (SO_PASSCRED, as
 * systemd checks NotifyAccess=main with it), until it is killed.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    struct sockaddr_un sa;
    size_t len;
    int fd, on = 1;

    if (argc != 2 || (len = strlen(argv[1])) == 0 || len >= sizeof(sa.sun_path)) {
        fprintf(stderr, "usage: notify_listen PATH|@NAME\n");
        return 2;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, argv[1], len);
    if (sa.sun_path[0] == '@')
        sa.sun_path[0] = '\0';
    fd = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0 ||
        bind(fd, (struct sockaddr *)&sa,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0) {
        perror("notify_listen");
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("listening\n");
    for (;;) {
        char buf[4096], cbuf[CMSG_SPACE(sizeof(struct ucred))];
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf) - 1};
        struct msghdr mh = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *cm;
        int pid = 0;
        ssize_t n = recvmsg(fd, &mh, 0);

        if (n < 0)
            continue;
        for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_CREDENTIALS) {
                struct ucred uc;
                memcpy(&uc, CMSG_DATA(cm), sizeof(uc));
                pid = (int)uc.pid;
            }
        buf[n] = '\0';
        printf("%d:", pid);
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
            printf(" %s |", line);
        printf("\n");
    }
}
