#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read everything once; write each line's words back to front into one output buffer
   that is sized up front (the output is never longer than the input plus one newline),
   so there is no per-piece reallocation and no rescanning of what was already written. */
static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

int main(void)
{
    size_t cap = 1 << 20, len = 0, got;
    char *in = malloc(cap);
    while ((got = fread(in + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap)
            in = realloc(in, cap *= 2);
    }
    char *out = malloc(len + 2), *o = out;
    size_t start = 0;
    while (start < len) {
        size_t end = start;
        while (end < len && in[end] != '\n')
            end++;
        /* scan the line backwards: each word is copied as soon as its first byte is found */
        size_t i = end;
        int first = 1;
        while (i > start) {
            while (i > start && is_space(in[i - 1]))
                i--;
            size_t wend = i;
            while (i > start && !is_space(in[i - 1]))
                i--;
            if (wend > i) {
                if (!first)
                    *o++ = ' ';
                memcpy(o, in + i, wend - i);
                o += wend - i;
                first = 0;
            }
        }
        *o++ = '\n';
        start = end + 1;
    }
    fwrite(out, 1, (size_t)(o - out), stdout);
    free(in);
    free(out);
    return 0;
}
