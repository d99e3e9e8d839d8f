#include <stdio.h>

static void print_line(unsigned long offset, const unsigned char *bytes, int n)
{
    printf("%08lx:", offset);
    for (int i = 0; i < 16; i++) {
        if (i < n)
            printf(" %02x", bytes[i]);
        else
            printf("   ");
    }
    printf("  ");
    for (int i = 0; i < n; i++)
        putchar(bytes[i] >= 0x20 && bytes[i] <= 0x7e ? bytes[i] : '.');
    putchar('\n');
}

int main(void)
{
    /* unbuffered, so that every byte shows up as soon as it is dumped */
    setvbuf(stdout, NULL, _IONBF, 0);
    unsigned char line[16];
    unsigned long offset = 0;
    int n = 0, c;
    while ((c = getchar()) != EOF) {
        line[n++] = (unsigned char)c;
        if (n == 16) {
            print_line(offset, line, n);
            offset += 16;
            n = 0;
        }
    }
    if (n > 0)
        print_line(offset, line, n);
    return 0;
}
