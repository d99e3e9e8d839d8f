// attack: become root again: setuid/setgid/setresuid(0), then look at the effective capabilities
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
#define _GNU_SOURCE
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    printf("setgid(0)=%d setuid(0)=%d setresuid=%d\n", setgid(0), setuid(0), setresuid(0, 0, 0));
    gid_t g = 0;
    printf("setgroups=%d\n", setgroups(1, &g));
    FILE *f = fopen("/proc/self/status", "r");
    char line[512];
    unsigned long long eff = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "CapEff:", 7)) eff = strtoull(line + 7, NULL, 16);
    if (f) fclose(f);
    printf("uid=%d euid=%d CapEff=%#llx\n", (int)getuid(), (int)geteuid(), eff);
    if (eff) printf("ESCAPED: effective capabilities %#llx\n", eff);
    return 0;
}
