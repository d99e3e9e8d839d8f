#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 4200

/* Append `piece` to the heap string *out, growing it to fit exactly. */
static void append(char **out, const char *piece)
{
    size_t need = strlen(*out) + strlen(piece) + 1;
    *out = realloc(*out, need);
    strcat(*out, piece);
}

int main(void)
{
    char line[MAX_LINE];
    char *words[MAX_LINE];
    char *out = calloc(1, 1);
    while (fgets(line, sizeof line, stdin)) {
        int n = 0;
        for (char *w = strtok(line, " \t\n"); w; w = strtok(NULL, " \t\n"))
            words[n++] = w;
        for (int i = n - 1; i >= 0; i--) {
            append(&out, words[i]);
            if (i > 0)
                append(&out, " ");
        }
        append(&out, "\n");
    }
    fputs(out, stdout);
    free(out);
    return 0;
}
