// attack: compile bomb: the preprocessor reads an endless random device
// verdict: compile_error|timeout
// limits: time_s=1 wall_s=2 memory_mb=64
// check: bounded_wall
// compile_limits: time_s=2 wall_s=6 memory_mb=512
// (smaller than COMPILE_LIMITS only to keep the suite fast: reading 2 GiB of
// /dev/random takes the default-limited compiler 5-12 s; compile_dev_zero.c
// covers the default limits)
#include </dev/random>
int main(void) { return 0; }
