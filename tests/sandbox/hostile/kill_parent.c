// attack: SIGKILL the parent (the fork server / supervisor / bwrap) from inside the run
// verdict: runtime_error|ok
// limits: time_s=1 wall_s=2 memory_mb=64
// Refuses to kill the test process itself (argv[4]).
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    pid_t testpid = argc > 4 ? (pid_t)atoi(argv[4]) : -1;
    pid_t ppid = getppid();
    if (ppid == testpid) {
        printf("ESCAPED: the parent is the test process itself (no supervisor between)\n");
    } else if (ppid > 1) {
        if (kill(ppid, SIGKILL) == 0) printf("killed parent %d\n", (int)ppid);
        else printf("blocked: kill %d\n", (int)ppid);
    }
    fflush(stdout);
    usleep(200000);
    printf("still running\n");
    return 0;
}
