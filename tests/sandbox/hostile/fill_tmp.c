// attack: fill /tmp with files (each under the file-size limit) until the disk quota stops it
// verdict: ok|runtime_error|output_limit
// limits: time_s=2 wall_s=3 memory_mb=64 disk_mb=32 file_size_mb=8
// bwrap_only: true
// reason: without a mount namespace /tmp is the host's and no quota applies to it
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

static char chunk[1 << 20];

int main(int argc, char **argv) {
    memset(chunk, 'F', sizeof chunk);
    int written = 0;
    for (int i = 0; i < 64; i++) {
        char path[4096];
        snprintf(path, sizeof path, "/tmp/codegym-hostile-%s-fill-%d", argc > 1 ? argv[1] : "x", i);
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
    if (written > 64) printf("ESCAPED: wrote %d MiB to /tmp with disk_mb=32\n", written);
    return 0;
}
