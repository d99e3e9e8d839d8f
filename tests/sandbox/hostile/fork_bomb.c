// attack: exponential fork bomb; every process keeps forking, then spins
// verdict: runtime_error|timeout
// limits: time_s=0.5 wall_s=1 memory_mb=64 processes=16
// check: host_responsive
// Capped at 12 generations (<= 4096 processes, each spinning <= 20 s) so a broken
// sandbox fails the test instead of taking the host down.
#include <time.h>
#include <unistd.h>

int main(void) {
    time_t deadline = time(NULL) + 20;
    for (int i = 0; i < 12; i++) fork();
    while (time(NULL) < deadline) {}
    return 0;
}
