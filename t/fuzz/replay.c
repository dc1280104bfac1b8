/*
 * replay: feeds every file of the fuzz corpus to LLVMFuzzerTestOneInput,
 * built with the ordinary compiler, so `make check` runs the fuzz target's
 * checks (and, in a SANITIZE=1 build, its sanitizers) without clang.
 *
 * Arguments are files or folders; with none it reads
 * $top_srcdir/t/fuzz/corpus.  Exit 0 when every input ran, 1 when none
 * was found; a broken promise aborts, as under libFuzzer.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long n;
    int rc = -1;

    if (!f)
        return -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        LLVMFuzzerTestOneInput(buf, (size_t)n);
        rc = 0;
    }
    free(buf);
    fclose(f);
    return rc;
}

/* Runs a file, or every regular file of a folder; returns how many ran. */
static int
run_path(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    int n = 0;

    if (stat(path, &st) < 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return run_file(path) == 0;
    if (!(d = opendir(path)))
        return 0;
    while ((e = readdir(d))) {
        char full[4096];
        if (e->d_name[0] == '.')
            continue;
        snprintf(full, sizeof(full), "%s/%s", path, e->d_name);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && run_file(full) == 0)
            n++;
    }
    closedir(d);
    return n;
}

int
main(int argc, char **argv)
{
    int n = 0;

    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            n += run_path(argv[i]);
    } else {
        const char *top = getenv("top_srcdir");
        char dir[4096];
        snprintf(dir, sizeof(dir), "%s/t/fuzz/corpus", top ? top : ".");
        n = run_path(dir);
    }
    printf("1..1\n%s - %d corpus input(s) replayed through LLVMFuzzerTestOneInput\n",
           n > 0 ? "ok 1" : "not ok 1", n);
    return n > 0 ? 0 : 1;
}
