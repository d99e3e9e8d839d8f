// attack: read files only root may read: /etc/shadow, /root/*, the test's private directory (mode 700)
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// rlimits_needs_root: true
// check: secret_hidden
// Reports only sizes, never contents, except for the test's own secret file.
#include <dirent.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    const char *hostdir = argc > 3 ? argv[3] : "/nonexistent";
    char secret[4096], hidden[4096];
    snprintf(secret, sizeof secret, "%s/secret.txt", hostdir);
    snprintf(hidden, sizeof hidden, "%s/tasks/hidden.yaml", hostdir);
    const char *paths[] = {"/etc/shadow", "/etc/gshadow", "/root/.npmrc", "/root/.gitconfig",
                           "/root/.bashrc", secret, hidden};
    for (int i = 0; i < 7; i++) {
        FILE *f = fopen(paths[i], "rb");
        if (!f) { printf("blocked: %s\n", paths[i]); continue; }
        char buf[65536];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        printf("ESCAPED: read %s (%zu bytes)\n", paths[i], n);
        if (i >= 5) printf("%s\n", buf);
    }
    const char *dirs[] = {"/root", hostdir};
    for (int i = 0; i < 2; i++) {
        DIR *d = opendir(dirs[i]);
        if (!d) { printf("blocked: listdir %s\n", dirs[i]); continue; }
        int n = 0;
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, ".pyenv")) n++;
        closedir(d);
        if (n) printf("ESCAPED: listed %s: %d entries\n", dirs[i], n);
    }
    return 0;
}
