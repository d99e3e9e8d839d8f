#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Hand-parsed input, then an LSD radix sort of the intervals by left end
 * (keys fit in 32 bits, so four 8-bit passes), then the usual sweep.
 */
struct interval {
    uint32_t l, r;
};

static char *slurp(void)
{
    size_t cap = 1 << 22, n = 0, got;
    char *buf = malloc(cap + 1);
    while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    buf[n] = '\0';
    return buf;
}

static uint32_t next_uint(char **pp)
{
    char *p = *pp;
    while (*p < '0' || *p > '9')
        p++;
    uint32_t x = 0;
    while (*p >= '0' && *p <= '9')
        x = x * 10 + (uint32_t)(*p++ - '0');
    *pp = p;
    return x;
}

int main(void)
{
    char *p = slurp();
    int n = (int)next_uint(&p);
    struct interval *v = malloc((n > 0 ? n : 1) * sizeof *v);
    struct interval *tmp = malloc((n > 0 ? n : 1) * sizeof *tmp);
    for (int i = 0; i < n; i++) {
        v[i].l = next_uint(&p);
        v[i].r = next_uint(&p);
    }
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = {0};
        for (int i = 0; i < n; i++)
            count[((v[i].l >> shift) & 255) + 1]++;
        for (int d = 0; d < 256; d++)
            count[d + 1] += count[d];
        for (int i = 0; i < n; i++)
            tmp[count[(v[i].l >> shift) & 255]++] = v[i];
        struct interval *t = v;
        v = tmp;
        tmp = t;
    }
    long long blocks = 0, total = 0, longest = 0;
    int i = 0;
    while (i < n) {
        uint32_t lo = v[i].l, hi = v[i].r;
        for (i++; i < n && v[i].l <= hi; i++)
            if (v[i].r > hi)
                hi = v[i].r;
        blocks++;
        total += hi - lo;
        if ((long long)(hi - lo) > longest)
            longest = hi - lo;
    }
    printf("%lld %lld %lld\n", blocks, total, longest);
    return 0;
}
