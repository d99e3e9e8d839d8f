// attack: look for descriptors leaked from the supervisor (control pipes, sockets, the build cache ...)
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    for (int fd = 3; fd < 1024; fd++) {
        if (fcntl(fd, F_GETFD) < 0) continue;
        char link[64], target[4096] = "?";
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 0) target[n] = 0;
        printf("ESCAPED: inherited fd %d -> %s\n", fd, target);
    }
    printf("scan done\n");
    return 0;
}
