#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

// Sort the values (LSD radix sort on the biased 32-bit keys: four byte-wide counting
// passes), then count pairs with two pointers moving towards each other over runs of
// equal values. No per-element allocation, no tree walking, sequential memory access.
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
    const char *p = data.data();
    auto next = [&p]() {
        while (*p != '-' && (*p < '0' || *p > '9'))
            p++;
        bool neg = *p == '-';
        p += neg;
        long long v = 0;
        while (*p >= '0' && *p <= '9')
            v = v * 10 + (*p++ - '0');
        return neg ? -v : v;
    };
    int n = (int)next();
    long long target = next();
    std::vector<uint32_t> a(n), tmp(n);
    for (int i = 0; i < n; i++)
        a[i] = (uint32_t)(next() + 2147483648LL);   // |x| <= 10^9: order-preserving bias
    for (int shift = 0; shift < 32; shift += 8) {
        size_t count[257] = {0};
        for (uint32_t v : a)
            count[((v >> shift) & 255) + 1]++;
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (uint32_t v : a)
            tmp[count[(v >> shift) & 255]++] = v;
        a.swap(tmp);
    }
    // biased sum: x + y = target  <=>  bx + by = target + 2^32
    long long want = target + 4294967296LL, pairs = 0;
    long long i = 0, j = (long long)n - 1;
    while (i < j) {
        long long s = (long long)a[i] + a[j];
        if (s < want) {
            i++;
        } else if (s > want) {
            j--;
        } else if (a[i] == a[j]) {
            long long k = j - i + 1;          // a run of equal values: any two of them
            pairs += k * (k - 1) / 2;
            break;
        } else {
            long long ci = 1, cj = 1;
            while (i + ci < j && a[i + ci] == a[i])
                ci++;
            while (j - cj > i && a[j - cj] == a[j])
                cj++;
            pairs += ci * cj;
            i += ci;
            j -= cj;
        }
    }
    printf("%lld\n", pairs);
    return 0;
}
