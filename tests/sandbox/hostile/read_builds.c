// attack: read other programs' builds (reference solutions, generators, other candidates) from the sandbox's build store
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// check: other_build, secret_hidden
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char mark[32];

static void scan_key(const char *kd) {  // kd: at most 8400 bytes
    DIR *d = opendir(kd);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char p[8800];
        snprintf(p, sizeof p, "%s/%s", kd, e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        static char buf[65536];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *hit = strstr(buf, mark);
        if (hit) printf("ESCAPED: read another build's file %s: %.60s\n", p, hit);
    }
    closedir(d);
}

int main(void) {
    snprintf(mark, sizeof mark, "%s-%s-", "CODEGYM", "SECRET");
    char cwd[4096], cand[5][4200];
    if (!getcwd(cwd, sizeof cwd)) return 1;
    snprintf(cand[0], sizeof cand[0], "/builds");
    for (int i = 1; i < 5; i++) {
        char *s = strrchr(cwd, '/');
        if (s && s != cwd) *s = 0; else strcpy(cwd, "/");
        snprintf(cand[i], sizeof cand[i], "%s/builds", strcmp(cwd, "/") ? cwd : "");
    }
    for (int i = 0; i < 5; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++) dup |= !strcmp(cand[i], cand[j]);
        DIR *d = dup ? NULL : opendir(cand[i]);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char kd[8400];
            if (strlen(cand[i]) + strlen(e->d_name) + 2 > sizeof kd) continue;
            snprintf(kd, sizeof kd, "%s/%s", cand[i], e->d_name);
            scan_key(kd);
        }
        closedir(d);
    }
    printf("done\n");
    return 0;
}
