#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int n, q;
    if (scanf("%d", &n) != 1)
        return 1;
    long long *a = malloc(sizeof *a * (size_t)n);
    for (int i = 0; i < n; i++)
        scanf("%lld", &a[i]);
    scanf("%d", &q);
    for (int k = 0; k < q; k++) {
        long long x;
        scanf("%lld", &x);
        long long best = a[0];
        for (int i = 1; i < n; i++) {
            long long d = llabs(a[i] - x), bd = llabs(best - x);
            if (d < bd || (d == bd && a[i] < best))
                best = a[i];
        }
        printf("%lld\n", best);
    }
    free(a);
    return 0;
}
