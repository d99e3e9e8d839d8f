#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

// Whole input in one buffer; rows are scanned in place (string_views, no copies);
// only the three needed columns are parsed; groups live in a hash map keyed by views.
struct Totals {
    long long rows = 0, qty = 0, revenue = 0;
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

int main()
{
    std::string data = slurp();
    const char *p = data.data(), *end = p + data.size();
    const char *eol = std::find(p, end, '\n');
    int c_region = -1, c_qty = -1, c_price = -1, ncols = 0;
    for (const char *f = p; f <= eol && f < end;) {
        const char *comma = std::find(f, eol, ',');
        std::string_view name(f, (size_t)(comma - f));
        if (!name.empty() && name.back() == '\r')
            name.remove_suffix(1);
        if (name == "region") c_region = ncols;
        else if (name == "qty") c_qty = ncols;
        else if (name == "price") c_price = ncols;
        ncols++;
        f = comma + 1;
        if (comma == eol)
            break;
    }
    std::unordered_map<std::string_view, Totals> groups;
    groups.reserve(1024);
    p = eol < end ? eol + 1 : end;
    while (p < end) {
        if (*p == '\n') {
            p++;
            continue;
        }
        std::string_view region;
        long long qty = 0, price = 0;
        for (int col = 0;; col++) {
            const char *f = p;
            if (col == c_qty || col == c_price) {
                long long x = 0;
                while (*p >= '0' && *p <= '9')
                    x = x * 10 + (*p++ - '0');
                (col == c_qty ? qty : price) = x;
            }
            while (p < end && *p != ',' && *p != '\n')
                p++;
            if (col == c_region)
                region = std::string_view(f, (size_t)(p - f));
            if (p >= end || *p == '\n')
                break;
            p++;  // the comma
        }
        if (p < end)
            p++;  // the newline
        Totals &t = groups[region];
        t.rows += 1;
        t.qty += qty;
        t.revenue += qty * price;
    }
    std::vector<std::pair<std::string_view, Totals>> sorted(groups.begin(), groups.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    std::string out;
    char line[128];
    for (auto &[name, t] : sorted) {
        out.append(name);
        int len = snprintf(line, sizeof line, " %lld %lld %lld\n", t.rows, t.qty, t.revenue);
        out.append(line, (size_t)len);
    }
    fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
