// attack: read other processes' environment through /proc/<pid>/environ (supervisor, test runner)
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// rlimits_needs_root: true
// check: canary_hidden
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    DIR *d = opendir("/proc");
    if (!d) { printf("no /proc\n"); return 0; }
    struct dirent *e;
    static char buf[1 << 20];
    while ((e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == getpid()) continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/environ", e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
            if (!strncmp(buf + i, "CODEGYM_CANARY=", 15) || strstr(buf + i, "cgcanary")) printf("ESCAPED: %s: %s\n", path, buf + i);
    }
    closedir(d);
    printf("scanned /proc\n");
    return 0;
}
