#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// Compressed sparse rows: count degrees, prefix sums, fill; the graph lives in two flat
// arrays and BFS uses a plain array as its queue. Duplicate edges and self-loops are
// harmless for BFS, so nothing needs deduplicating. Input is parsed from one buffer.
static std::vector<char> slurp()
{
    std::vector<char> data;
    size_t len = 0, got;
    data.resize(1 << 20);
    while ((got = fread(data.data() + len, 1, data.size() - len - 1, stdin)) > 0) {
        len += got;
        if (len + 1 == data.size())
            data.resize(data.size() * 2);
    }
    data.resize(len + 1);
    data[len] = 0;
    return data;
}

int main()
{
    std::vector<char> data = slurp();
    const char *p = data.data();
    auto next = [&p]() {
        while (*p < '0' || *p > '9')
            p++;
        int v = 0;
        while (*p >= '0' && *p <= '9')
            v = v * 10 + (*p++ - '0');
        return v;
    };
    int n = next(), m = next();
    std::vector<int> eu(m), ev(m), start(n + 2, 0);
    for (int i = 0; i < m; i++) {
        eu[i] = next();
        ev[i] = next();
        start[eu[i] + 1]++;
        start[ev[i] + 1]++;
    }
    for (int i = 1; i <= n + 1; i++)
        start[i] += start[i - 1];
    std::vector<int> fill(start.begin(), start.end() - 1), adj(2 * (size_t)m);
    for (int i = 0; i < m; i++) {
        adj[fill[eu[i]]++] = ev[i];
        adj[fill[ev[i]]++] = eu[i];
    }
    std::vector<int> dist(n + 1, -1), queue(n);
    std::vector<long long> count;
    int head = 0, tail = 0;
    dist[1] = 0;
    queue[tail++] = 1;
    while (head < tail) {
        int u = queue[head++];
        int du = dist[u];
        if ((int)count.size() <= du)
            count.push_back(0);
        count[du]++;
        for (int k = start[u]; k < start[u + 1]; k++) {
            int v = adj[k];
            if (dist[v] < 0) {
                dist[v] = du + 1;
                queue[tail++] = v;
            }
        }
    }
    std::string out;
    char line[64];
    for (size_t d = 0; d < count.size(); d++)
        out.append(line, (size_t)snprintf(line, sizeof line, "%zu %lld\n", d, count[d]));
    out.append(line, (size_t)snprintf(line, sizeof line, "unreachable %d\n", n - tail));
    fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
