#include <cstdint>
#include <cstdio>
#include <vector>

// One pass over one input buffer: numbers are parsed in place (at most 18 digits fit in
// 64 bits, so one reduction modulo M per number), operators act on a plain array used as
// the stack, and the answers are formatted into one output buffer written once.
static const uint64_t MOD = 1000000007ULL;

int main()
{
    std::vector<char> data(1 << 20);
    size_t len = 0, got;
    while ((got = fread(data.data() + len, 1, data.size() - len - 1, stdin)) > 0) {
        len += got;
        if (len + 1 == data.size())
            data.resize(data.size() * 2);
    }
    data[len] = 0;
    std::vector<uint64_t> stack(len / 2 + 2);
    std::vector<char> out;
    out.reserve(1 << 16);
    const char *p = data.data(), *end = p + len;
    while (p < end) {
        size_t top = 0;
        while (*p != '\n' && *p) {
            char c = *p;
            if (c == ' ') {
                p++;
            } else if (c >= '0' && c <= '9') {
                uint64_t v = 0;
                while (*p >= '0' && *p <= '9')       // at most 18 digits: no overflow
                    v = v * 10 + (uint64_t)(*p++ - '0');
                stack[top++] = v % MOD;
            } else {
                uint64_t b = stack[--top], a = stack[top - 1];
                stack[top - 1] = c == '+' ? (a + b) % MOD : c == '-' ? (a + MOD - b) % MOD : a * b % MOD;
                p++;
            }
        }
        if (*p == '\n')
            p++;
        if (top == 0)
            continue;                 // a blank line (only possible at the very end)
        char tmp[24];
        int k = 0;
        uint64_t v = stack[top - 1];
        do {
            tmp[k++] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        while (k)
            out.push_back(tmp[--k]);
        out.push_back('\n');
    }
    fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
