// attack: fill the run directory with files (each under the file-size limit) past the disk quota
// verdict: ok|runtime_error|output_limit
// limits: time_s=2 wall_s=3 memory_mb=64 disk_mb=32 file_size_mb=8
// bwrap_only: true
// reason: rlimits bound each file (RLIMIT_FSIZE), not the total size of a directory
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char chunk[1 << 20];

int main(void) {
    memset(chunk, 'F', sizeof chunk);
    int written = 0;
    for (int i = 0; i < 64; i++) {
        char path[64];
        snprintf(path, sizeof path, "fill-%d", i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) { printf("open failed after %d MiB\n", written); break; }
        int ok = 1;
        for (int j = 0; j < 4 && ok; j++) {
            if (write(fd, chunk, sizeof chunk) == (ssize_t)sizeof chunk) written++;
            else ok = 0;
        }
        close(fd);
        if (!ok) { printf("stopped after %d MiB\n", written); break; }
    }
    if (written > 64) printf("ESCAPED: wrote %d MiB to the run directory with disk_mb=32\n", written);
    return 0;
}
