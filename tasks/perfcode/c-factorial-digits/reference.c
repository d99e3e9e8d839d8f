#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* n! in base 10^9 limbs (nine digits per 32-bit limb), multiplied by the product of as
   many consecutive factors as fit below 2^32 at a time, so each pass over the number does
   the work of several single-factor passes with one 64-bit multiply per limb. */
#define BASE 1000000000u

int main(void)
{
    int n;
    if (scanf("%d", &n) != 1)
        return 1;
    size_t cap = 1024, len = 1;
    uint32_t *limb = malloc(cap * sizeof *limb);
    limb[0] = 1;
    for (uint64_t k = 2; k <= (uint64_t)n;) {
        uint64_t m = 1;
        while (k <= (uint64_t)n && m * k < (1ULL << 32))
            m *= k++;
        uint64_t carry = 0;
        for (size_t i = 0; i < len; i++) {
            uint64_t v = limb[i] * m + carry;     /* < 10^9 * 2^32 + 2^32 < 2^64 */
            carry = v / BASE;
            limb[i] = (uint32_t)(v - carry * BASE);
        }
        while (carry > 0) {
            if (len == cap)
                limb = realloc(limb, (cap *= 2) * sizeof *limb);
            limb[len++] = (uint32_t)(carry % BASE);
            carry /= BASE;
        }
    }
    long sum = 0;
    size_t count = 9 * (len - 1);
    for (size_t i = 0; i < len; i++)
        for (uint32_t v = limb[i]; v > 0; v /= 10)
            sum += v % 10;
    for (uint32_t v = limb[len - 1]; v > 0; v /= 10)
        count++;
    printf("%zu %ld\n", count, sum);
    free(limb);
    return 0;
}
