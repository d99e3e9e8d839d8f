// attack: unbounded recursion with a large frame (stack overflow -> SIGSEGV; the stack may be as large as the memory limit, so memory_limit is accepted too)
// verdict: runtime_error|memory_limit
// limits: time_s=1 wall_s=2 memory_mb=256
#include <stdio.h>

static int depth(volatile int n) {
    volatile char frame[4096];
    frame[0] = (char)n;
    return depth(n + 1) + frame[0];
}

int main(void) {
    printf("%d\n", depth(0));
    return 0;
}
