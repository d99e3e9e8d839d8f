#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    int r, c;
    if (scanf("%d %d", &r, &c) != 2)
        return 1;
    long long *mn = malloc(sizeof *mn * (size_t)c);
    long long *mx = malloc(sizeof *mx * (size_t)c);
    long long *sum = calloc((size_t)c, sizeof *sum);
    for (int i = 0; i < r; i++) {
        for (int j = 0; j < c; j++) {
            long long v;
            scanf("%lld", &v);
            if (i == 0 || v < mn[j])
                mn[j] = v;
            if (i == 0 || v > mx[j])
                mx[j] = v;
            sum[j] += v;
        }
    }
    for (int j = 0; j < c; j++)
        printf("%lld %lld %lld\n", mn[j], mx[j], sum[j]);
    free(mn);
    free(mx);
    free(sum);
    return 0;
}
