#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One contiguous, padded block per matrix and the i-k-j loop order: the inner loop
 * walks rows of B and C with unit stride, so it streams through cache. It is written
 * with GCC/Clang vector extensions, so it is SIMD at -O2 on any target. Tiling over k
 * keeps a band of B hot in L2, and four rows of C share every load of B.
 */
typedef uint32_t v8u __attribute__((vector_size(32)));

static uint32_t state;

static uint32_t next_value(void)
{
    state = state * 1664525u + 1013904223u;
    return state >> 22;
}

int main(void)
{
    int n;
    if (scanf("%d %u", &n, &state) != 2)
        return 1;
    int w = (n + 7) / 8;                 /* vectors per padded row */
    size_t stride = (size_t)w * 8;
    uint32_t *a = calloc((size_t)n * stride, sizeof *a);
    v8u *b = aligned_alloc(32, ((size_t)n * w + 1) * sizeof(v8u));
    v8u *c = aligned_alloc(32, ((size_t)(n + 3) * w + 1) * sizeof(v8u));
    memset(b, 0, (size_t)n * w * sizeof(v8u));
    memset(c, 0, (size_t)(n + 3) * w * sizeof(v8u));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[(size_t)i * stride + j] = next_value();
    uint32_t *bs = (uint32_t *)b;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            bs[(size_t)i * stride + j] = next_value();
    enum { KB = 64 };
    for (int k0 = 0; k0 < n; k0 += KB) {
        int k1 = k0 + KB < n ? k0 + KB : n;
        for (int i = 0; i < n; i += 4) {
            v8u *c0 = c + (size_t)i * w, *c1 = c0 + w, *c2 = c1 + w, *c3 = c2 + w;
            const uint32_t *a0 = a + (size_t)i * stride;
            int rows = n - i < 4 ? n - i : 4;
            for (int k = k0; k < k1; k++) {
                const v8u *bk = b + (size_t)k * w;
                uint32_t s0 = a0[k];
                uint32_t s1 = rows > 1 ? a0[stride + k] : 0;
                uint32_t s2 = rows > 2 ? a0[2 * stride + k] : 0;
                uint32_t s3 = rows > 3 ? a0[3 * stride + k] : 0;
                for (int j = 0; j < w; j++) {
                    v8u x = bk[j];
                    c0[j] += s0 * x;
                    c1[j] += s1 * x;
                    c2[j] += s2 * x;
                    c3[j] += s3 * x;
                }
            }
        }
    }
    char *out = malloc((size_t)n * 24 + 1), *o = out;
    const uint32_t *cs = (const uint32_t *)c;
    for (int i = 0; i < n; i++) {
        const uint32_t *ci = cs + (size_t)i * stride;
        int best = 0;
        for (int j = 1; j < n; j++)
            if (ci[j] > ci[best])
                best = j;
        o += sprintf(o, "%u %d\n", ci[best], best + 1);
    }
    fwrite(out, 1, (size_t)(o - out), stdout);
    return 0;
}
