// attack: spread memory over several processes, each under the per-process limit
// verdict: ok|memory_limit|runtime_error
// limits: time_s=2 wall_s=3 memory_mb=64 processes=8
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
    int fds[6][2], kids = 0;
    for (int i = 0; i < 6; i++) {
        if (pipe(fds[i]) != 0) break;
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) {
            // volatile: the compiler must not drop stores to memory nobody reads
            volatile char *p = malloc(48 << 20);
            char ok = '0';
            if (p) {
                for (size_t k = 0; k < (48u << 20); k += 4096) p[k] = 'm';
                ok = '1';
            }
            if (write(fds[i][1], &ok, 1) < 0) {}
            usleep(300000);
            _exit(0);
        }
        close(fds[i][1]);
        kids++;
    }
    int held = 0;
    for (int i = 0; i < kids; i++) {
        char c = '0';
        if (read(fds[i][0], &c, 1) == 1 && c == '1') held++;
    }
    while (wait(NULL) > 0) {}
    printf("%d children held 48 MiB each at the same time\n", held);
    if (held * 48 > 2 * 64) printf("ESCAPED: %d MiB held at once with memory_mb=64\n", held * 48);
    return 0;
}
