#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t state;

static uint32_t next_value(void)
{
    state = state * 1664525u + 1013904223u;
    return state >> 22;
}

static uint32_t **new_matrix(int n)
{
    uint32_t **m = malloc(n * sizeof *m);
    for (int i = 0; i < n; i++)
        m[i] = malloc(n * sizeof **m);
    return m;
}

int main(void)
{
    int n;
    if (scanf("%d %u", &n, &state) != 2)
        return 1;
    uint32_t **a = new_matrix(n), **b = new_matrix(n), **c = new_matrix(n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[i][j] = next_value();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            b[i][j] = next_value();
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            uint32_t sum = 0;
            for (int k = 0; k < n; k++)
                sum += a[i][k] * b[k][j];
            c[i][j] = sum;
        }
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int j = 1; j < n; j++)
            if (c[i][j] > c[i][best])
                best = j;
        printf("%u %d\n", c[i][best], best + 1);
    }
    return 0;
}
