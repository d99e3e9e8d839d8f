// attack: open descriptors until the kernel refuses (after trying to raise RLIMIT_NOFILE)
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64 open_files=64
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>

int main(void) {
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    int n = 0;
    while (n < 100000 && open("/dev/null", O_RDONLY) >= 0) n++;
    printf("stopped at %d descriptors\n", n);
    if (n > 64 + 16) printf("ESCAPED: opened %d descriptors with open_files=64\n", n);
    return 0;
}
