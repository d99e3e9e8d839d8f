#include <cstdio>
#include <functional>
#include <queue>
#include <vector>

// Two heaps: `low` (a max-heap) holds the smaller half and `high` (a min-heap) the larger
// half, with low.size() == high.size() or one more; the lower median is low.top().
// O(log n) per value, in contiguous arrays; input and output through one buffer each.
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
    std::vector<long long> lowv, highv;
    lowv.reserve(n / 2 + 1);
    highv.reserve(n / 2 + 1);
    std::priority_queue<long long> low(std::less<long long>(), std::move(lowv));
    std::priority_queue<long long, std::vector<long long>, std::greater<long long>> high(
        std::greater<long long>(), std::move(highv));
    std::vector<char> out((size_t)n * 21 + 1);
    char *o = out.data();
    for (int i = 0; i < n; i++) {
        long long x = next();
        if (low.empty() || x <= low.top())
            low.push(x);
        else
            high.push(x);
        if (low.size() > high.size() + 1) {
            high.push(low.top());
            low.pop();
        } else if (high.size() > low.size()) {
            low.push(high.top());
            high.pop();
        }
        long long m = low.top();
        // format the number backwards into a small buffer
        char tmp[24];
        int k = 0;
        unsigned long long u = m < 0 ? 0ULL - (unsigned long long)m : (unsigned long long)m;
        do {
            tmp[k++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        if (m < 0)
            *o++ = '-';
        while (k)
            *o++ = tmp[--k];
        *o++ = '\n';
    }
    fwrite(out.data(), 1, (size_t)(o - out.data()), stdout);
    return 0;
}
