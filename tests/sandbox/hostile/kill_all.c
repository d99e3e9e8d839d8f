// attack: kill(-1, SIGKILL) (every process it may signal) and kill(1, SIGKILL)
// verdict: runtime_error|ok
// limits: time_s=1 wall_s=2 memory_mb=64
// rlimits_needs_root: true
// Fires only when kill(-1) cannot reach anything outside the run: the test
// process (argv[4]) must not be signalable, and every process of this uid must
// be this run's supervisor (the parent) or one of its descendants. Otherwise it
// refuses and reports ESCAPED.
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int ppid_of(int pid, char *state) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *rp = strrchr(buf, ')');
    int ppid = 0;
    char st = '?';
    if (rp) sscanf(rp + 2, "%c %d", &st, &ppid);
    if (state) *state = st;
    return ppid;
}

static int outsiders(void) {
    int me = getpid(), parent = getppid(), n = 0;
    uid_t uid = getuid();
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        int pid = atoi(e->d_name);
        char path[300];
        struct stat st;
        snprintf(path, sizeof path, "/proc/%s", e->d_name);
        if (stat(path, &st) != 0 || st.st_uid != uid || pid == me || pid == parent) continue;
        char state = '?';
        ppid_of(pid, &state);
        if (state == 'Z') continue;  // zombies cannot be hurt
        int p = pid, hops = 0;
        while (p != parent && p > 1 && hops++ < 64) p = ppid_of(p, NULL);
        if (p != parent) n++;
    }
    if (d) closedir(d);
    return n;
}

int main(int argc, char **argv) {
    int testpid = argc > 4 ? atoi(argv[4]) : 1;
    int reachable = testpid > 0 && kill(testpid, 0) == 0;
    int others = outsiders();
    if (reachable || others) {
        printf("ESCAPED: kill(-1) would reach processes outside the run (test process signalable: %d, others: %d); refusing\n",
               reachable, others);
        return 0;
    }
    printf("kill(-1): %d\n", kill(-1, SIGKILL));
    printf("kill(1): %d\n", kill(1, SIGKILL));
    fflush(stdout);
    usleep(200000);
    printf("still running\n");
    return 0;
}
