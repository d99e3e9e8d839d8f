#include <iostream>
#include <string>

int main()
{
    const std::string digits = "0123456789abcdefghijklmnopqrstuvwxyz";
    int n;
    std::cin >> n;
    for (int i = 0; i < n; i++) {
        unsigned long long x;
        unsigned int base;
        std::cin >> x >> base;
        std::string s;
        do {
            s = digits[x % base] + s;
            x /= base;
        } while (x > 0);
        std::cout << s << std::endl;
    }
    return 0;
}
