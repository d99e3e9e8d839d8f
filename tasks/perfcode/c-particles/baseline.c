#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The particle record of a larger simulator: everything about one particle together. */
struct particle {
    long id;
    char label[24];
    long mass;
    long pos;
    long vel;
    double charge;
};

static unsigned long long state;

static long next_value(void)
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (long)(state >> 33);
}

int main(void)
{
    long n, steps, L;
    unsigned long long seed;
    if (scanf("%ld %ld %ld %llu", &n, &steps, &L, &seed) != 4)
        return 1;
    state = seed;
    struct particle **ps = malloc(sizeof *ps * (size_t)n);
    for (long i = 0; i < n; i++) {
        struct particle *p = malloc(sizeof *p);
        p->id = i + 1;
        snprintf(p->label, sizeof p->label, "p%ld", i + 1);
        p->pos = next_value() % L;
        p->vel = next_value() % L - L / 2;
        p->mass = next_value() % 100 + 1;
        p->charge = 0.0;
        ps[i] = p;
    }
    for (long s = 0; s < steps; s++) {
        for (long i = 0; i < n; i++) {
            struct particle *p = ps[i];
            p->pos += p->vel;
            if (p->pos < 0) {
                p->pos = -p->pos;
                p->vel = -p->vel;
            } else if (p->pos > L - 1) {
                p->pos = 2 * (L - 1) - p->pos;
                p->vel = -p->vel;
            }
        }
    }
    long long weighted = 0, right = 0;
    for (long i = 0; i < n; i++) {
        weighted += ps[i]->mass * ps[i]->pos;
        if (ps[i]->vel > 0)
            right++;
    }
    printf("%lld %lld\n", weighted, right);
    for (long i = 0; i < n; i++)
        free(ps[i]);
    free(ps);
    return 0;
}
