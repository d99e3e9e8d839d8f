// attack: fork many sleeping children and count how many the sandbox allowed
// verdict: runtime_error
// limits: time_s=1 wall_s=2 memory_mb=64 processes=8
// Exits 1 (runtime_error) once fork fails; prints ESCAPED when far more children
// than `processes` could be created.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
    int made = 0;
    for (int i = 0; i < 200; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            printf("fork failed after %d children\n", made);
            return 1;
        }
        if (pid == 0) { sleep(5); _exit(0); }
        made++;
    }
    printf("ESCAPED: created %d processes with processes=8\n", made);
    return 0;
}
