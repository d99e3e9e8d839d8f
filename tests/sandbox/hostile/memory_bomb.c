// attack: malloc and touch memory 1 MiB at a time, never checking for NULL
// verdict: memory_limit
// limits: time_s=2 wall_s=4 memory_mb=64
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    for (int i = 0; i < 4096; i++) {  // 4 GiB cap
        volatile char *p = malloc(1 << 20);  // volatile: the stores must happen
        for (int k = 0; k < (1 << 20); k += 4096) p[k] = 'x';
    }
    printf("ESCAPED: touched 4096 MiB with memory_mb=64\n");
    return 0;
}
