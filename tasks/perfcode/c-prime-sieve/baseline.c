#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    long n;
    if (scanf("%ld", &n) != 1)
        return 1;
    /* composite[k] != 0 when k is not prime: one byte per number, the whole range at once */
    char *composite = calloc((size_t)n + 1, 1);
    long count = 0;
    unsigned long long sum = 0;
    for (long i = 2; i <= n; i++) {
        if (composite[i])
            continue;
        count++;
        sum += (unsigned long long)i;
        for (long j = i * i; j <= n; j += i)
            composite[j] = 1;
    }
    printf("%ld %llu\n", count, sum);
    free(composite);
    return 0;
}
