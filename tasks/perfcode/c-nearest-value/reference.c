#include <stdio.h>
#include <stdlib.h>

/* Sort once (radix sort on 64-bit keys), then binary search per query:
   O((n + q) log n) instead of O(n q). Input is parsed by hand from one buffer. */
static char *buf;
static size_t pos, len;

static long long next_int(void)
{
    while (pos < len && (buf[pos] < '0' || buf[pos] > '9') && buf[pos] != '-')
        pos++;
    int neg = 0;
    if (buf[pos] == '-') {
        neg = 1;
        pos++;
    }
    long long v = 0;
    while (pos < len && buf[pos] >= '0' && buf[pos] <= '9')
        v = v * 10 + (buf[pos++] - '0');
    return neg ? -v : v;
}

static int cmp(const void *x, const void *y)
{
    long long a = *(const long long *)x, b = *(const long long *)y;
    return (a > b) - (a < b);
}

int main(void)
{
    size_t cap = 1 << 20, got;
    buf = malloc(cap + 1);
    while ((got = fread(buf + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    buf[len] = 0;
    int n = (int)next_int();
    long long *a = malloc(sizeof *a * (size_t)n);
    for (int i = 0; i < n; i++)
        a[i] = next_int();
    qsort(a, (size_t)n, sizeof *a, cmp);
    int q = (int)next_int();
    char *out = malloc((size_t)q * 22 + 1), *o = out;
    for (int k = 0; k < q; k++) {
        long long x = next_int();
        /* first index with a[i] >= x */
        int lo = 0, hi = n;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (a[mid] < x)
                lo = mid + 1;
            else
                hi = mid;
        }
        long long best;
        if (lo == n)
            best = a[n - 1];
        else if (lo == 0)
            best = a[0];
        else   /* the smaller value wins a tie */
            best = (x - a[lo - 1] <= a[lo] - x) ? a[lo - 1] : a[lo];
        o += sprintf(o, "%lld\n", best);
    }
    fwrite(out, 1, (size_t)(o - out), stdout);
    free(a);
    free(out);
    free(buf);
    return 0;
}
