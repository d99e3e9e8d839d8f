// attack: a sparse 10 GiB file, then a file written until the file-size limit (SIGXFSZ) stops it
// verdict: runtime_error|output_limit
// limits: time_s=2 wall_s=3 memory_mb=64 file_size_mb=8
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char chunk[1 << 20];

int main(void) {
    // sparse: ignore SIGXFSZ only for this probe, so failure is an error code
    signal(SIGXFSZ, SIG_IGN);
    int fd = open("sparse.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0 && lseek(fd, (off_t)10 << 30, SEEK_SET) >= 0 && write(fd, "x", 1) == 1)
        printf("ESCAPED: created a 10 GiB sparse file with file_size_mb=8\n");
    else
        printf("blocked: sparse file\n");
    if (fd >= 0) close(fd);
    fflush(stdout);
    signal(SIGXFSZ, SIG_DFL);
    memset(chunk, 'B', sizeof chunk);
    fd = open("big.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < 1024; i++)
        if (write(fd, chunk, sizeof chunk) < 0) return 3;
    printf("ESCAPED: wrote 1 GiB with file_size_mb=8\n");
    return 0;
}
