#include <iostream>
#include <iterator>
#include <set>

int main()
{
    int n;
    std::cin >> n;
    std::multiset<long long> values;
    for (int i = 0; i < n; i++) {
        long long x;
        std::cin >> x;
        values.insert(x);
        // the lower median: walk to position (size - 1) / 2
        auto it = std::next(values.begin(), (long)(values.size() - 1) / 2);
        std::cout << *it << "\n";
    }
    return 0;
}
