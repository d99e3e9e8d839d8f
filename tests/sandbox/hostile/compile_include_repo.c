// attack: read the hidden tests at compile time: #include a task file from the repository
// verdict: compile_error
// limits: time_s=1 wall_s=2 memory_mb=64
// check: secret_hidden
// template: true
// bwrap_only: true
// reason: the repository is world-readable without a mount namespace around the compiler
#include "@REPO@/tests/hostile/.secret-@SECRET_ID@.yaml"
int main(void) { return 0; }
