#include <stdio.h>
#include <stdlib.h>

/* n! as an array of decimal digits, least significant first, multiplied by 2, 3, ..., n */
int main(void)
{
    int n;
    if (scanf("%d", &n) != 1)
        return 1;
    size_t cap = 16, len = 1;
    unsigned char *digits = malloc(cap);
    digits[0] = 1;
    for (int k = 2; k <= n; k++) {
        int carry = 0;
        for (size_t i = 0; i < len; i++) {
            int v = digits[i] * k + carry;
            digits[i] = (unsigned char)(v % 10);
            carry = v / 10;
        }
        while (carry > 0) {
            if (len == cap)
                digits = realloc(digits, cap *= 2);
            digits[len++] = (unsigned char)(carry % 10);
            carry /= 10;
        }
    }
    long sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += digits[i];
    printf("%zu %ld\n", len, sum);
    free(digits);
    return 0;
}
