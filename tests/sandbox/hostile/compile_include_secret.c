// attack: exfiltrate the test's private secret (mode-700 directory) through the compiler's error messages
// verdict: compile_error
// limits: time_s=1 wall_s=2 memory_mb=64
// rlimits_needs_root: true
// check: secret_hidden
// template: true
#include "@HOSTDIR@/secret.txt"
int main(void) { return 0; }
