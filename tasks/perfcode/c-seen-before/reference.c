#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Open addressing with a multiplicative (Fibonacci) hash: aligned addresses have
 * zero low bits, so the high bits of addr * golden ratio spread them evenly.
 * Input is read in one go and parsed by hand; output goes to one buffer.
 */
static char *slurp(size_t *len)
{
    size_t cap = 1 << 22, n = 0, got;
    char *buf = malloc(cap + 1);
    while ((got = fread(buf + n, 1, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int main(void)
{
    size_t len;
    char *buf = slurp(&len), *p = buf;
    long n = strtol(p, &p, 10);
    if (n <= 0)
        return 0;
    int bits = 1;
    while ((1L << bits) < 2 * n)
        bits++;
    size_t size = (size_t)1 << bits, mask = size - 1;
    uint64_t *keys = malloc(size * sizeof *keys);
    int32_t *first = calloc(size, sizeof *first);   /* 0 marks an empty slot */
    char *out = malloc((size_t)n * 12 + 1), *o = out;
    for (long i = 1; i <= n; i++) {
        while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
            p++;
        if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
            p += 2;
        uint64_t addr = 0;
        int v;
        while ((v = hexval((unsigned char)*p)) >= 0) {
            addr = addr << 4 | (uint64_t)v;
            p++;
        }
        size_t h = (size_t)((addr * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
        while (first[h] != 0 && keys[h] != addr)
            h = (h + 1) & mask;
        int32_t ans = first[h];
        if (ans == 0) {
            keys[h] = addr;
            first[h] = (int32_t)i;
        }
        /* write ans in decimal */
        char tmp[12];
        int t = 0;
        do {
            tmp[t++] = (char)('0' + ans % 10);
            ans /= 10;
        } while (ans);
        while (t)
            *o++ = tmp[--t];
        *o++ = '\n';
    }
    fwrite(out, 1, (size_t)(o - out), stdout);
    return 0;
}
