#include <stdio.h>
#include <stdlib.h>

#define NBUCKETS 4096

struct node {
    unsigned long long addr;
    int first;
    struct node *next;
};

static struct node *table[NBUCKETS];

int main(void)
{
    int n;
    if (scanf("%d", &n) != 1)
        return 0;
    for (int i = 1; i <= n; i++) {
        unsigned long long addr;
        if (scanf("%llx", &addr) != 1)
            return 1;
        struct node **bucket = &table[addr % NBUCKETS];
        struct node *p = *bucket;
        while (p != NULL && p->addr != addr)
            p = p->next;
        if (p != NULL) {
            printf("%d\n", p->first);
        } else {
            struct node *fresh = malloc(sizeof *fresh);
            fresh->addr = addr;
            fresh->first = i;
            fresh->next = *bucket;
            *bucket = fresh;
            printf("0\n");
        }
    }
    return 0;
}
