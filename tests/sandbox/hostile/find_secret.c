// attack: search the whole filesystem for hidden tests / expected outputs (a secret the test planted)
// verdict: ok|timeout
// limits: time_s=2 wall_s=3 memory_mb=64
// check: secret_hidden
// bwrap_only: true
// reason: the repository and world-readable task files stay visible without a mount namespace
#define _GNU_SOURCE
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static time_t end_time;
static char mark[32];

static int skip(const char *p) {
    static const char *s[] = {"/proc", "/sys", "/dev", "/usr", "/lib", "/lib64", "/bin", "/sbin",
                              "/boot", "/var/lib", "/var/cache", "/root/.pyenv", "/root/.rustup",
                              "/root/.cargo", "/root/.npm", "/root/.m2", 0};
    for (int i = 0; s[i]; i++) if (!strcmp(p, s[i])) return 1;
    const char *b = strrchr(p, '/');
    return b && !strcmp(b, "/.git");
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    (void)ftw;
    if (time(NULL) > end_time) return 1;
    if (type == FTW_D && skip(path)) return FTW_SKIP_SUBTREE;
    if (type != FTW_F || st->st_size > (1 << 20)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    char *hit = memmem(buf, n, mark, strlen(mark));
    if (hit) {
        size_t left = n - (size_t)(hit - buf);
        printf("ESCAPED: secret in %s: %.*s\n", path, (int)(left < 80 ? left : 80), hit);
        fflush(stdout);
    }
    return 0;
}

int main(int argc, char **argv) {
    snprintf(mark, sizeof mark, "%s-%s-", "CODEGYM", "SECRET");  // split: no self-match
    end_time = time(NULL) + 2;
    const char *roots[] = {argc > 2 ? argv[2] : "/nonexistent", argc > 3 ? argv[3] : "/nonexistent",
                           "/work", "/tmp", "/var/tmp", "/root", "/home", "/srv", "/opt", "/mnt", "/", 0};
    for (int i = 0; roots[i]; i++)
        if (nftw(roots[i], visit, 32, FTW_PHYS | FTW_ACTIONRETVAL) == 1) return 0;
    printf("search finished\n");
    return 0;
}
