#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>

int main()
{
    int h, w, t;
    std::cin >> h >> w >> t;
    std::set<std::pair<int, int>> live;
    for (int r = 0; r < h; r++) {
        std::string row;
        std::cin >> row;
        for (int c = 0; c < w; c++)
            if (row[c] == '#')
                live.insert({r, c});
    }
    for (int step = 0; step < t; step++) {
        std::map<std::pair<int, int>, int> neighbours;
        for (const auto &cell : live)
            for (int dr = -1; dr <= 1; dr++)
                for (int dc = -1; dc <= 1; dc++)
                    if (dr != 0 || dc != 0)
                        neighbours[{(cell.first + dr + h) % h, (cell.second + dc + w) % w}]++;
        std::set<std::pair<int, int>> next;
        for (const auto &entry : neighbours)
            if (entry.second == 3 || (entry.second == 2 && live.count(entry.first)))
                next.insert(entry.first);
        live = next;
    }
    for (int r = 0; r < h; r++) {
        std::string row(w, '.');
        for (int c = 0; c < w; c++)
            if (live.count({r, c}))
                row[c] = '#';
        std::cout << row << "\n";
    }
    return 0;
}
