// attack: sleep without using CPU (only the wall-clock limit can stop it)
// verdict: timeout
// limits: time_s=0.5 wall_s=1 memory_mb=64
#include <stdio.h>
#include <unistd.h>

int main(void) {
    sleep(20);
    printf("ESCAPED: slept 20 s with wall_s=1.5\n");
    return 0;
}
