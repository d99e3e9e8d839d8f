// attack: catch SIGXCPU (and ignore SIGTERM, SIGINT, SIGHUP, ...) and keep spinning
// verdict: timeout
// limits: time_s=0.5 wall_s=1 memory_mb=64
// A handler (not SIG_IGN) for SIGXCPU keeps the process alive past the soft CPU
// limit; only the hard limit's SIGKILL or the supervisor's SIGKILL stop it.
#include <signal.h>
#include <stdio.h>
#include <time.h>

static volatile sig_atomic_t caught = 0;
static void on_signal(int s) { (void)s; caught++; }

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    for (int s = 1; s < NSIG; s++) {
        if (s == SIGKILL || s == SIGSTOP) continue;
        if (s == SIGXCPU || s == SIGTERM) sigaction(s, &sa, NULL);
        else signal(s, SIG_IGN);
    }
    time_t deadline = time(NULL) + 20;
    volatile unsigned long n = 0;
    while (time(NULL) < deadline) n++;
    printf("ESCAPED: survived 20 s, caught %d signals\n", (int)caught);
    return 0;
}
