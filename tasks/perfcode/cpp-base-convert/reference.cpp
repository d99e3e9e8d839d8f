#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

// Read everything at once, parse by hand, write each number's digits backwards into
// a small scratch array and append it to one output buffer that is written once.
static std::string slurp()
{
    std::string data;
    char chunk[1 << 16];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        data.append(chunk, got);
    return data;
}

static uint64_t next_uint(const char *&p)
{
    while (*p < '0' || *p > '9')
        p++;
    uint64_t x = 0;
    while (*p >= '0' && *p <= '9')
        x = x * 10 + (uint64_t)(*p++ - '0');
    return x;
}

int main()
{
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    std::string data = slurp();
    const char *p = data.c_str();
    uint64_t n = next_uint(p);
    std::string out;
    out.reserve(n * 24);
    char tmp[72];
    for (uint64_t i = 0; i < n; i++) {
        uint64_t x = next_uint(p);
        uint32_t base = (uint32_t)next_uint(p);
        char *end = tmp + sizeof tmp, *q = end;
        *--q = '\n';
        if (base == 10) {            // constant divisor: the compiler uses a multiply
            do { *--q = digits[x % 10]; x /= 10; } while (x);
        } else if (base == 16) {
            do { *--q = digits[x & 15]; x >>= 4; } while (x);
        } else if (base == 2) {
            do { *--q = (char)('0' + (x & 1)); x >>= 1; } while (x);
        } else {
            do { *--q = digits[x % base]; x /= base; } while (x);
        }
        out.append(q, (size_t)(end - q));
    }
    fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
