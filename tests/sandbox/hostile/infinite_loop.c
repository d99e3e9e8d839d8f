// attack: busy loop
// verdict: timeout
// limits: time_s=0.5 wall_s=1 memory_mb=64
#include <stdio.h>
#include <time.h>

int main(void) {
    time_t deadline = time(NULL) + 20;  // safety net
    volatile unsigned long n = 0;
    while (time(NULL) < deadline) n++;
    printf("ESCAPED: ran 20 s with time_s=0.5\n");
    return 0;
}
