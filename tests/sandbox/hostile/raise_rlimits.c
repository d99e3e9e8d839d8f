// attack: raise its own hard rlimits (CPU, AS, NPROC, FSIZE, NOFILE), then spin
// verdict: timeout
// limits: time_s=0.5 wall_s=1 memory_mb=64
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

int main(void) {
    int res[] = {RLIMIT_CPU, RLIMIT_AS, RLIMIT_NPROC, RLIMIT_FSIZE, RLIMIT_NOFILE};
    const char *names[] = {"CPU", "AS", "NPROC", "FSIZE", "NOFILE"};
    for (int i = 0; i < 5; i++) {
        struct rlimit rl;
        getrlimit(res[i], &rl);
        if (rl.rlim_max == RLIM_INFINITY) { printf("%s: hard already infinite\n", names[i]); continue; }
        rlim_t old = rl.rlim_max;
        rl.rlim_cur = rl.rlim_max = old * 4 + 1024;
        if (setrlimit(res[i], &rl) == 0)
            printf("ESCAPED: raised hard %s from %lu\n", names[i], (unsigned long)old);
        else
            printf("blocked: %s\n", names[i]);
    }
    fflush(stdout);
    time_t end = time(NULL) + 20;
    volatile unsigned long n = 0;
    while (time(NULL) < end) n++;
    return 0;
}
