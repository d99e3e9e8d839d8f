#include <stdio.h>
#include <stdlib.h>

struct interval {
    long long l, r;
};

int main(void)
{
    int n;
    if (scanf("%d", &n) != 1)
        return 1;
    struct interval *v = malloc((n > 0 ? n : 1) * sizeof *v);
    for (int i = 0; i < n; i++) {
        if (scanf("%lld %lld", &v[i].l, &v[i].r) != 2)
            return 1;
    }
    /* insertion sort by left end */
    for (int i = 1; i < n; i++) {
        struct interval cur = v[i];
        int j = i - 1;
        while (j >= 0 && v[j].l > cur.l) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = cur;
    }
    long long blocks = 0, total = 0, longest = 0;
    int i = 0;
    while (i < n) {
        long long lo = v[i].l, hi = v[i].r;
        i++;
        while (i < n && v[i].l <= hi) {
            if (v[i].r > hi)
                hi = v[i].r;
            i++;
        }
        blocks++;
        total += hi - lo;
        if (hi - lo > longest)
            longest = hi - lo;
    }
    printf("%lld %lld %lld\n", blocks, total, longest);
    return 0;
}
