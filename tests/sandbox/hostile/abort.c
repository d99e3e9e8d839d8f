// attack: SIGABRT
// verdict: runtime_error
// limits: time_s=1 wall_s=2 memory_mb=64
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    printf("about to abort\n");
    fflush(stdout);
    abort();
}
