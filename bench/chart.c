/*
 * chart: see chart.h.
 */
#include "config.h"

#include "bench/chart.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/servers.h"

int
chart_run(const char *gp, const char *data, char *err, size_t errlen)
{
    char gnuplot[4096];
    pid_t pid;
    int status;

    if (servers_find("gnuplot", NULL, gnuplot, sizeof(gnuplot)) < 0) {
        snprintf(err, errlen, "gnuplot not found (apt-get install gnuplot-nox); data in %s", data);
        return -1;
    }
    if ((pid = fork()) == 0) {
        char folder[4096];
        const char *slash = strrchr(gp, '/');

        /* In the script's folder: its files may be named relative to it. */
        if (slash) {
            snprintf(folder, sizeof(folder), "%.*s", (int)(slash - gp), gp);
            if (chdir(folder) < 0)
                _exit(126);
        }
        execl(gnuplot, "gnuplot", slash ? slash + 1 : gp, (char *)NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, errlen, "gnuplot %s failed", gp);
        return -1;
    }
    return 0;
}

int
chart_draw(const char *base, const char *title, const struct chart_row *rows, int n, char *err,
           size_t errlen)
{
    char dat[4096], gp[4096], png[4096];
    FILE *f;

    snprintf(dat, sizeof(dat), "%s.dat", base);
    snprintf(gp, sizeof(gp), "%s.gp", base);
    snprintf(png, sizeof(png), "%s.png", base);
    if (!(f = fopen(dat, "w"))) {
        snprintf(err, errlen, "%s: %s", dat, strerror(errno));
        return -1;
    }
    fprintf(f, "# configuration users_passed conduitd_pss_mb postgres_pss_mb\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "\"%s\" %.0f %.1f %.1f\n", rows[i].label, rows[i].users, rows[i].server_pss_mb,
                rows[i].pg_pss_mb);
    fclose(f);
    if (!(f = fopen(gp, "w"))) {
        snprintf(err, errlen, "%s: %s", gp, strerror(errno));
        return -1;
    }
    fprintf(f,
            "set terminal pngcairo size 960,560 font 'sans,10'\n"
            "set output '%s'\n"
            "set title \"%s\"\n"
            "set xlabel 'configuration (instances x workers each)'\n"
            "set ylabel 'users passed'\n"
            "set y2label 'PSS, mean over the hold (MB)'\n"
            "stats '%s' using 2 nooutput\n"
            "set ytics nomirror\nset y2tics\nset yrange [0:STATS_max * 1.15 + 1]\n"
            "set y2range [0:*]\nset offsets 0.5, 0.5, 0, 0\n"
            "set grid ytics\nset key top left\nset boxwidth 0.5\nset style fill solid 0.5\n"
            "plot '%s' using 0:2:xtic(1) with boxes title 'users passed' axes x1y1, \\\n"
            "     '' using 0:2:2 with labels offset 0,0.7 notitle axes x1y1, \\\n"
            "     '' using 0:3 with linespoints lw 2 pt 7 title 'conduitd PSS' axes x1y2, \\\n"
            "     '' using 0:4 with linespoints lw 2 pt 5 title 'PostgreSQL PSS' axes x1y2\n",
            png, title, dat, dat);
    fclose(f);
    return chart_run(gp, dat, err, errlen);
}
