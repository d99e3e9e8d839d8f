#include <stdio.h>
#include <stdlib.h>

/* The cost is all in parsing: read the input in large blocks with fread and convert the
   digits by hand (scanf interprets its format string and locks the stream for every
   number). A fixed block buffer keeps the working set in cache. */
static char buf[1 << 16];
static size_t bpos, blen;

static inline int next_char(void)
{
    if (bpos == blen) {
        blen = fread(buf, 1, sizeof buf, stdin);
        bpos = 0;
        if (blen == 0)
            return -1;
    }
    return (unsigned char)buf[bpos++];
}

static long long next_int(void)
{
    int ch = next_char();
    while (ch != '-' && (ch < '0' || ch > '9'))
        ch = next_char();
    int neg = ch == '-';
    if (neg)
        ch = next_char();
    long long v = 0;
    while (ch >= '0' && ch <= '9') {
        v = v * 10 + (ch - '0');
        ch = next_char();
    }
    return neg ? -v : v;
}

int main(void)
{
    int r = (int)next_int(), c = (int)next_int();
    long long *mn = malloc(sizeof *mn * (size_t)c);
    long long *mx = malloc(sizeof *mx * (size_t)c);
    long long *sum = malloc(sizeof *sum * (size_t)c);
    for (int j = 0; j < c; j++)
        mn[j] = mx[j] = sum[j] = next_int();
    for (int i = 1; i < r; i++) {
        for (int j = 0; j < c; j++) {
            long long v = next_int();
            if (v < mn[j])
                mn[j] = v;
            if (v > mx[j])
                mx[j] = v;
            sum[j] += v;
        }
    }
    char *out = malloc((size_t)c * 64 + 1), *o = out;
    for (int j = 0; j < c; j++)
        o += sprintf(o, "%lld %lld %lld\n", mn[j], mx[j], sum[j]);
    fwrite(out, 1, (size_t)(o - out), stdout);
    return 0;
}
