#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Segmented sieve over odd numbers only: the base primes up to sqrt(n) are found first,
   then [3, n] is sieved in segments of 32768 odd numbers (a 32 KiB byte array that stays in
   L1), each base prime remembering where its next multiple falls. The byte-per-number
   sieve of the whole range instead streams n bytes through the cache for every small
   prime. */
enum { SEG = 1 << 15 };

int main(void)
{
    long n;
    if (scanf("%ld", &n) != 1)
        return 1;
    if (n < 2) {
        printf("0 0\n");
        return 0;
    }
    long root = 1;
    while ((root + 1) * (root + 1) <= n)
        root++;
    /* odd base primes up to root, by a small plain sieve */
    char *small = calloc((size_t)root + 1, 1);
    long *primes = malloc(sizeof *primes * ((size_t)root / 2 + 2));
    long *next = malloc(sizeof *next * ((size_t)root / 2 + 2));
    long np = 0;
    for (long i = 3; i <= root; i += 2) {
        if (small[i])
            continue;
        primes[np] = i;
        next[np] = i * i;                 /* the first odd multiple not crossed by a smaller prime */
        np++;
        for (long j = i * i; j <= root; j += 2 * i)
            small[j] = 1;
    }
    long count = 1;                       /* the prime 2 */
    unsigned long long sum = 2;
    static unsigned char seg[SEG];
    /* segment s covers the odd numbers low, low+2, ..., low + 2*(SEG-1) */
    for (long low = 3; low <= n; low += 2L * SEG) {
        long high = low + 2L * (SEG - 1);
        if (high > n)
            high = n;
        long len = (high - low) / 2 + 1;
        memset(seg, 0, (size_t)len);
        for (long k = 0; k < np; k++) {
            long p = primes[k], j = next[k];
            if (j > high)
                continue;
            for (; j <= high; j += 2 * p)
                seg[(j - low) >> 1] = 1;
            next[k] = j;
        }
        for (long i = 0; i < len; i++) {
            if (!seg[i]) {
                count++;
                sum += (unsigned long long)(low + 2 * i);
            }
        }
    }
    printf("%ld %llu\n", count, sum);
    free(small);
    free(primes);
    free(next);
    return 0;
}
