// attack: compile bomb: the preprocessor reads an endless file
// verdict: compile_error|timeout
// limits: time_s=1 wall_s=2 memory_mb=64
// check: bounded_wall
#include "/dev/zero"
int main(void) { return 0; }
