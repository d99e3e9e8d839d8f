// attack: SIGSTOP itself; a stopped process uses no CPU and never exits
// verdict: timeout
// limits: time_s=0.5 wall_s=1 memory_mb=64
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    kill(getpid(), SIGSTOP);
    printf("resumed after SIGSTOP\n");
    return 0;
}
