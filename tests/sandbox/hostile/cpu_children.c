// attack: burn CPU in children while the parent only waits (per-process RLIMIT_CPU misses the total)
// verdict: timeout
// limits: time_s=0.5 wall_s=1.5 memory_mb=64 processes=8
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(void) {
    for (int i = 0; i < 4; i++) {
        if (fork() == 0) {
            time_t end = time(NULL) + 20;
            volatile unsigned long n = 0;
            while (time(NULL) < end) n++;
            _exit(0);
        }
    }
    while (wait(NULL) > 0) {}
    printf("parent exits cleanly after its children burned CPU\n");
    return 0;
}
