// attack: one 8 GiB malloc, used without checking for NULL (typical contestant code)
// verdict: memory_limit
// limits: time_s=1 wall_s=2 memory_mb=64
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    size_t n = (size_t)8 << 30;
    volatile char *p = malloc(n);  // volatile: the stores must happen
    for (size_t i = 0; i < n; i += 4096) p[i] = 1;
    printf("ESCAPED: touched 8 GiB with memory_mb=64\n");
    return 0;
}
