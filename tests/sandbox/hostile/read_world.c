// attack: read world-readable host files: the repository's tests and tasks, the project spec
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// bwrap_only: true
// reason: files readable by every user stay readable without a mount namespace
#include <dirent.h>
#include <stdio.h>

int main(int argc, char **argv) {
    const char *repo = argc > 2 ? argv[2] : "/nonexistent";
    char p[4][4096];
    snprintf(p[0], 4096, "%s/tests/test_hostile.py", repo);
    snprintf(p[1], 4096, "%s/pyproject.toml", repo);
    snprintf(p[2], 4096, "/work/spec.md");
    snprintf(p[3], 4096, "/work/shared/DESIGN.md");
    for (int i = 0; i < 4; i++) {
        FILE *f = fopen(p[i], "rb");
        if (!f) { printf("blocked: %s\n", p[i]); continue; }
        fclose(f);
        printf("ESCAPED: read %s\n", p[i]);
    }
    char d[4][4096];
    snprintf(d[0], 4096, "%s/tasks", repo);
    snprintf(d[1], 4096, "%s/tests", repo);
    snprintf(d[2], 4096, "/work/main/tasks");
    snprintf(d[3], 4096, "/work");
    for (int i = 0; i < 4; i++) {
        DIR *dir = opendir(d[i]);
        if (!dir) { printf("blocked: listdir %s\n", d[i]); continue; }
        closedir(dir);
        printf("ESCAPED: listed %s\n", d[i]);
    }
    return 0;
}
