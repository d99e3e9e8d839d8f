// attack: create files outside the run directory: /usr, /etc, /, /root, the repository, the test's private dir
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// rlimits_needs_root: true
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *token = argc > 1 ? argv[1] : "x";
    const char *repo = argc > 2 ? argv[2] : "/nonexistent";
    const char *hostdir = argc > 3 ? argv[3] : "/nonexistent";
    char t[8][4096];
    snprintf(t[0], 4096, "/usr/codegym-hostile-%s", token);
    snprintf(t[1], 4096, "/usr/local/bin/codegym-hostile-%s", token);
    snprintf(t[2], 4096, "/etc/codegym-hostile-%s", token);
    snprintf(t[3], 4096, "/codegym-hostile-%s", token);
    snprintf(t[4], 4096, "/root/codegym-hostile-%s", token);
    snprintf(t[5], 4096, "%s/codegym-hostile-%s", repo, token);
    snprintf(t[6], 4096, "%s/tests/codegym-hostile-%s", repo, token);
    snprintf(t[7], 4096, "%s/codegym-hostile-%s", hostdir, token);
    for (int i = 0; i < 8; i++) {
        int fd = open(t[i], O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            if (write(fd, "pwned\n", 6) < 0) {}
            close(fd);
            // "/" may be a private tmpfs (not a hole by itself); the host checks its own "/"
            printf("%s %s\n", i == 3 ? "wrote (private root?)" : "ESCAPED: wrote", t[i]);
        } else {
            printf("blocked: %s: %s\n", t[i], strerror(errno));
        }
    }
    return 0;
}
