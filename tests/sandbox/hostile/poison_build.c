// attack: replace its own binary and source in the run directory, plant a file, write into parent and sibling dirs
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// check: rerun_clean
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int create(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0755);
    if (fd < 0) return 0;
    if (write(fd, "x", 1) < 0) {}
    close(fd);
    return 1;
}

int main(int argc, char **argv) {
    const char *token = argc > 1 ? argv[1] : "x";
    if (access("planted.txt", F_OK) == 0) printf("ESCAPED: a file planted by an earlier run is still here\n");
    else printf("clean start\n");
    create("planted.txt");
    char exe[4096] = {0};
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        // a running binary cannot be written (ETXTBSY) but it can be unlinked and replaced
        unlink(exe);
        int fd = open(exe, O_WRONLY | O_CREAT | O_TRUNC, 0755);
        if (fd >= 0) {
            const char *s = "#!/bin/sh\necho POISONED\n";
            if (write(fd, s, strlen(s)) < 0) {}
            close(fd);
            printf("replaced %s\n", exe);
        } else printf("blocked: replace %s\n", exe);
    }
    FILE *src = fopen("main.c", "w");
    if (src) { fputs("int main(void){return 7;}\n", src); fclose(src); }
    char cwd[4096], parent[4096], p[16800];
    if (!getcwd(cwd, sizeof cwd)) return 0;
    strcpy(parent, cwd);
    char *slash = strrchr(parent, '/');
    if (!slash || slash == parent) return 0;
    *slash = 0;
    snprintf(p, sizeof p, "%s/codegym-hostile-%s-parent", parent, token);
    if (create(p)) printf("ESCAPED: wrote into the parent directory %s\n", parent);
    else printf("blocked: parent %s\n", parent);
    DIR *d = opendir(parent);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sib[8400];
        snprintf(sib, sizeof sib, "%s/%s", parent, e->d_name);
        struct stat st;
        // the run's own scratch space (/tmp, TMPDIR) is writable by design
        const char *tmpdir = getenv("TMPDIR");
        if (strcmp(sib, cwd) == 0 || strcmp(sib, "/tmp") == 0 || strcmp(sib, "/dev/shm") == 0
            || (tmpdir && strcmp(sib, tmpdir) == 0) || stat(sib, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        snprintf(p, sizeof p, "%s/codegym-hostile-%s-sibling", sib, token);
        if (create(p)) printf("ESCAPED: wrote into a sibling directory %s\n", sib);
    }
    if (d) closedir(d);
    return 0;
}
