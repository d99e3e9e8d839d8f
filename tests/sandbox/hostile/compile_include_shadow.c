// attack: exfiltrate /etc/shadow through the compiler's error messages
// verdict: compile_error
// limits: time_s=1 wall_s=2 memory_mb=64
// check: no_shadow_leak
#include "/etc/shadow"
int main(void) { return 0; }
