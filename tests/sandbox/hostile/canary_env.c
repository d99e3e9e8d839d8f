// attack: read the parent's environment (the test sets CODEGYM_CANARY before creating the sandbox)
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// check: canary_hidden
#include <stdio.h>
#include <string.h>

extern char **environ;

int main(void) {
    int n = 0;
    for (char **e = environ; *e; e++, n++)
        if (strstr(*e, "CANARY") || strstr(*e, "cgcanary")) printf("ESCAPED: %s\n", *e);
    printf("%d variables visible\n", n);
    return 0;
}
