// attack: ptrace the parent (supervisor) and the test process (PTRACE_SEIZE does not stop them)
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// rlimits_needs_root: true
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

static void seize(pid_t pid) {
    if (pid <= 0) return;
    if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) == 0) printf("ESCAPED: ptrace-seized pid %d\n", (int)pid);
    else printf("blocked: ptrace %d: %s\n", (int)pid, strerror(errno));
}

int main(int argc, char **argv) {
    seize(getppid());
    if (argc > 4) seize((pid_t)atoi(argv[4]));
    return 0;
}
