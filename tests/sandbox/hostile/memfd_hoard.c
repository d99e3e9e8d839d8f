// attack: hold memory in memfds that no process maps (outside RLIMIT_AS and the resident-memory sampling)
// verdict: ok|memory_limit|runtime_error
// limits: time_s=4 wall_s=8 memory_mb=128 file_size_mb=64
// Raw memfd_create syscall (no libc wrapper needed); see memfd_hoard.py.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
    static char chunk[1 << 20];
    memset(chunk, 0xa5, sizeof chunk);
    long held = 0;
    int n = 0;
    while (held < 1024) {
        int fd = (int)syscall(SYS_memfd_create, "hoard", 0);
        if (fd < 0) {
            printf("blocked after %ld MiB: %s\n", held, strerror(errno));
            break;
        }
        n++;
        for (int i = 0; i < 64; i++, held++) {
            if (write(fd, chunk, sizeof chunk) != (ssize_t)sizeof chunk) {
                printf("write stopped after %ld MiB: %s\n", held, strerror(errno));
                break;
            }
        }
    }
    if (held >= 512)
        printf("ESCAPED: %ld MiB held in %d memfds\n", held, n);
    return 0;
}
