// attack: read the expected output from disk: print the content of the first small file next to the program or in /tmp
// kind: stdio
// task: secret
// verdict: wrong_answer|runtime_error
#include <dirent.h>
#include <stdio.h>
#include <string.h>

static int dump_first(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strncmp(e->d_name, "main", 4)) continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        FILE *f = fopen(p, "r");
        if (!f) continue;
        char buf[4096];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        if (n > 0 && n < 200) { fwrite(buf, 1, n, stdout); closedir(d); return 1; }
    }
    closedir(d);
    return 0;
}

int main(void) {
    const char *dirs[] = {".", "..", "/tmp", "/box", "/builds", 0};
    for (int i = 0; dirs[i]; i++) if (dump_first(dirs[i])) return 0;
    printf("%032d\n", 0);
    return 0;
}
