// attack: start hundreds of busy pthreads (real parallelism: CPU time adds up across threads)
// verdict: timeout|runtime_error
// limits: time_s=0.5 wall_s=1 memory_mb=256 processes=16
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static time_t end_time;

static void *spin(void *arg) {
    volatile unsigned long n = 0;
    while (time(NULL) < end_time) n++;
    return arg;
}

int main(void) {
    end_time = time(NULL) + 20;
    int started = 0;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (int i = 0; i < 500; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, spin, NULL) != 0) break;
        started++;
    }
    printf("%d threads\n", started);
    fflush(stdout);
    spin(NULL);
    printf("ESCAPED: spun 20 s with time_s=0.5\n");
    return 0;
}
