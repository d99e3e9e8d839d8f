// attack: write to stderr as fast as possible
// verdict: output_limit
// limits: time_s=1 wall_s=2 memory_mb=64 output_bytes=65536
// check: output_bounded
#include <string.h>
#include <time.h>
#include <unistd.h>

static char chunk[1 << 20];

int main(void) {
    memset(chunk, 'E', sizeof chunk);
    time_t end = time(NULL) + 20;
    while (time(NULL) < end)
        if (write(2, chunk, sizeof chunk) < 0) {}
    return 0;
}
