// attack: privileged writes through /proc: lower own oom_score_adj, rewrite the hostname (same value)
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
#include <stdio.h>
#include <string.h>

static int try_write(const char *path, const char *data) {
    FILE *f = fopen(path, "w");
    if (!f) { printf("blocked: %s\n", path); return 0; }
    int ok = fputs(data, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok) printf("blocked: %s (write)\n", path);
    return ok;
}

int main(void) {
    if (try_write("/proc/self/oom_score_adj", "-1000"))
        printf("ESCAPED: lowered /proc/self/oom_score_adj to -1000\n");
    char name[256] = {0};
    FILE *f = fopen("/proc/sys/kernel/hostname", "r");
    if (f) { if (fgets(name, sizeof name, f)) {} fclose(f); }
    name[strcspn(name, "\n")] = 0;
    if (name[0] && try_write("/proc/sys/kernel/hostname", name))
        printf("ESCAPED: wrote /proc/sys/kernel/hostname\n");
    try_write("/proc/self/comm", "innocent");
    return 0;
}
