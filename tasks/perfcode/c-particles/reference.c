#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Structure of arrays: the step loop touches only two dense int32 arrays (positions fit,
   since |pos + vel| < 1.5 * 10^9 < 2^31). The update is branch-free, written with GCC
   vector extensions (SIMD at -O2), so no bounce costs a branch misprediction; particles are
   processed in blocks that stay in L1 for all steps, so each block is loaded only once. */
typedef int v4si __attribute__((vector_size(16)));
typedef unsigned v4su __attribute__((vector_size(16)));

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
    long padded = (n + 3) & ~3L;                 /* padding particles: pos = vel = 0, never move */
    v4si *pos = aligned_alloc(16, sizeof(int) * (size_t)padded);
    v4si *vel = aligned_alloc(16, sizeof(int) * (size_t)padded);
    int *p32 = (int *)pos, *v32 = (int *)vel;
    unsigned char *mass = malloc((size_t)n);
    memset(p32, 0, sizeof(int) * (size_t)padded);
    memset(v32, 0, sizeof(int) * (size_t)padded);
    for (long i = 0; i < n; i++) {
        p32[i] = (int)(next_value() % L);
        v32[i] = (int)(next_value() % L - L / 2);
        mass[i] = (unsigned char)(next_value() % 100 + 1);
    }
    const int top = (int)(L - 1), twice = (int)(2 * (L - 1));
    const v4si zero = {0, 0, 0, 0};
    const v4si vtop = {top, top, top, top}, vtwice = {twice, twice, twice, twice};
    const long lanes = padded / 4, B = 1024;     /* 1024 vectors x 2 arrays = 32 KiB */
    for (long b = 0; b < lanes; b += B) {
        long e = b + B < lanes ? b + B : lanes;
        for (long s = 0; s < steps; s++) {
            for (long i = b; i < e; i++) {
                v4si v = vel[i], p = pos[i] + v;
                v4si low = p < zero, high = p > vtop;          /* lanes: -1 (true) or 0 */
                v4si flip = low | high;
                /* twice - p is only kept where p > top; elsewhere it may exceed 2^31, so it
                   is computed in unsigned (wrapping) arithmetic */
                v4si mirrored = (v4si)((v4su)vtwice - (v4su)p);
                v4si reflected = (low & -p) | (~low & mirrored);
                pos[i] = (flip & reflected) | (~flip & p);
                vel[i] = (v ^ flip) - flip;                    /* -v where flipped */
            }
        }
    }
    long long weighted = 0, right = 0;
    for (long i = 0; i < n; i++) {
        weighted += (long long)mass[i] * p32[i];
        right += v32[i] > 0;
    }
    printf("%lld %lld\n", weighted, right);
    free(pos);
    free(vel);
    free(mass);
    return 0;
}
