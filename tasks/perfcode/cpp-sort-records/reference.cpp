#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

// The input stays in one buffer; records hold string_views into it, and the sort
// compares them in place (no copies, no allocation). Ranks restart when the
// department changes, which in sorted order is a simple comparison with the previous row.
struct Record {
    std::string_view name, dept;
    int64_t salary;
};

static std::string slurp()
{
    std::string data;
    char chunk[1 << 16];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        data.append(chunk, got);
    return data;
}

static std::string_view next_word(const char *&p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
        p++;
    const char *s = p;
    while (*p && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t')
        p++;
    return std::string_view(s, (size_t)(p - s));
}

static int64_t to_int(std::string_view s)
{
    int64_t x = 0;
    for (char c : s)
        x = x * 10 + (c - '0');
    return x;
}

int main()
{
    std::string data = slurp();
    const char *p = data.c_str();
    int n = (int)to_int(next_word(p));
    std::vector<Record> v((size_t)n);
    for (Record &r : v) {
        r.name = next_word(p);
        r.dept = next_word(p);
        r.salary = to_int(next_word(p));
    }
    std::sort(v.begin(), v.end(), [](const Record &a, const Record &b) {
        if (int c = a.dept.compare(b.dept))
            return c < 0;
        if (a.salary != b.salary)
            return a.salary > b.salary;
        return a.name < b.name;
    });
    std::string out;
    out.reserve(data.size() + (size_t)n * 8);
    char num[48];
    int rank = 0;
    for (size_t i = 0; i < v.size(); i++) {
        rank = (i > 0 && v[i].dept == v[i - 1].dept) ? rank + 1 : 1;
        out.append(v[i].dept);
        out.append(num, (size_t)snprintf(num, sizeof num, " %d ", rank));
        out.append(v[i].name);
        out.append(num, (size_t)snprintf(num, sizeof num, " %lld\n", (long long)v[i].salary));
    }
    fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
