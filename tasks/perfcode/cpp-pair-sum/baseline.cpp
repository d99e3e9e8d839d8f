#include <iostream>
#include <map>

int main()
{
    int n;
    long long target;
    std::cin >> n >> target;
    std::map<long long, long long> seen;   // value -> how many times it appeared so far
    long long pairs = 0;
    for (int i = 0; i < n; i++) {
        long long x;
        std::cin >> x;
        pairs += seen[target - x];
        seen[x]++;
    }
    std::cout << pairs << std::endl;
    return 0;
}
