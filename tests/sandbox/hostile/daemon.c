// attack: double-fork + setsid daemon that tries to outlive the run and write a heartbeat to the host
// verdict: ok|timeout|runtime_error
// limits: time_s=1 wall_s=2 memory_mb=64
// check: no_heartbeat
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *token = argc > 1 ? argv[1] : "x";
    const char *repo = argc > 2 ? argv[2] : "/nonexistent";
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            if (chdir("/") != 0) {}
            close(0); close(1); close(2);
            usleep(500000);
            char a[4096], b[4096];
            snprintf(a, sizeof a, "/tmp/codegym-hostile-%s-heartbeat", token);
            snprintf(b, sizeof b, "%s/codegym-hostile-%s-heartbeat", repo, token);
            time_t end = time(NULL) + 10;
            while (time(NULL) < end) {
                FILE *f = fopen(a, "a");
                if (f) { fprintf(f, "%ld\n", (long)time(NULL)); fclose(f); }
                f = fopen(b, "a");
                if (f) { fprintf(f, "%ld\n", (long)time(NULL)); fclose(f); }
                usleep(100000);
            }
            _exit(0);
        }
        _exit(0);
    }
    printf("parent exits\n");
    return 0;
}
