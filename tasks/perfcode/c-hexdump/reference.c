#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read all input at once, format into one large buffer with table lookups, write once. */
int main(void)
{
    size_t cap = 1 << 20, len = 0, got;
    unsigned char *in = malloc(cap);
    while ((got = fread(in + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap)
            in = realloc(in, cap *= 2);
    }
    static const char hex[] = "0123456789abcdef";
    /* one line: 9 (offset + ':') + 48 (hex) + 2 + 16 (ascii) + 1 (newline) = 76 bytes at most */
    size_t lines = (len + 15) / 16;
    char *out = malloc(lines * 76 + 1), *p = out;
    for (size_t off = 0; off < len; off += 16) {
        size_t n = len - off < 16 ? len - off : 16;
        for (int s = 28; s >= 0; s -= 4)
            *p++ = hex[(off >> s) & 15];
        *p++ = ':';
        const unsigned char *b = in + off;
        for (size_t i = 0; i < 16; i++) {
            *p++ = ' ';
            if (i < n) {
                *p++ = hex[b[i] >> 4];
                *p++ = hex[b[i] & 15];
            } else {
                *p++ = ' ';
                *p++ = ' ';
            }
        }
        *p++ = ' ';
        *p++ = ' ';
        for (size_t i = 0; i < n; i++)
            *p++ = (b[i] >= 0x20 && b[i] <= 0x7e) ? (char)b[i] : '.';
        *p++ = '\n';
    }
    fwrite(out, 1, (size_t)(p - out), stdout);
    free(in);
    free(out);
    return 0;
}
