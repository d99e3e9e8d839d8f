// attack: write through a NULL pointer (SIGSEGV)
// verdict: runtime_error
// limits: time_s=1 wall_s=2 memory_mb=64
#include <stdio.h>

int main(void) {
    volatile int *p = NULL;
    *p = 42;
    printf("ESCAPED: wrote through NULL\n");
    return 0;
}
