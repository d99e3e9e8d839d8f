// attack: create files in /tmp, /var/tmp and /dev/shm, which must be private to the run, not the host's
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// bwrap_only: true
// reason: without a mount namespace these world-writable directories are the host's own
#include <stdio.h>

int main(int argc, char **argv) {
    const char *dirs[] = {"/tmp", "/var/tmp", "/dev/shm"};
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/codegym-hostile-%s", dirs[i], argc > 1 ? argv[1] : "x");
        FILE *f = fopen(path, "w");
        if (!f) { printf("blocked: %s\n", path); continue; }
        fprintf(f, "written from the sandbox\n");
        fclose(f);
        printf("wrote %s (must be private to the run)\n", path);
    }
    return 0;
}
