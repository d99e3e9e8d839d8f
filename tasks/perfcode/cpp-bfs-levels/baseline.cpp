#include <iostream>
#include <map>
#include <queue>
#include <set>
#include <vector>

int main()
{
    int n, m;
    std::cin >> n >> m;
    std::map<int, std::set<int>> adjacency;
    for (int i = 0; i < m; i++) {
        int u, v;
        std::cin >> u >> v;
        adjacency[u].insert(v);
        adjacency[v].insert(u);
    }
    std::map<int, int> dist;
    std::queue<int> frontier;
    dist[1] = 0;
    frontier.push(1);
    while (!frontier.empty()) {
        int u = frontier.front();
        frontier.pop();
        for (int v : adjacency[u]) {
            if (dist.find(v) == dist.end()) {
                dist[v] = dist[u] + 1;
                frontier.push(v);
            }
        }
    }
    std::vector<int> count;
    for (auto &entry : dist) {
        if ((int)count.size() <= entry.second)
            count.resize(entry.second + 1);
        count[entry.second]++;
    }
    for (size_t d = 0; d < count.size(); d++)
        std::cout << d << " " << count[d] << std::endl;
    std::cout << "unreachable " << n - (int)dist.size() << std::endl;
    return 0;
}
