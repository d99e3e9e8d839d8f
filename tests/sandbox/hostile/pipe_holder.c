// attack: exit at once but leave a child holding stdout/stderr open (a supervisor waiting for EOF hangs)
// verdict: ok|timeout
// limits: time_s=0.5 wall_s=1 memory_mb=64
// check: bounded_wall
#include <stdio.h>
#include <unistd.h>

int main(void) {
    printf("parent exits, child keeps the pipes\n");
    fflush(stdout);
    if (fork() == 0) { sleep(20); _exit(0); }
    return 0;
}
