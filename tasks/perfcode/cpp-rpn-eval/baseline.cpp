#include <iostream>
#include <sstream>
#include <stack>
#include <string>

static const long long MOD = 1000000007LL;

int main()
{
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream tokens(line);
        std::stack<long long> stack;
        std::string token;
        while (tokens >> token) {
            if (token == "+" || token == "-" || token == "*") {
                long long b = stack.top();
                stack.pop();
                long long a = stack.top();
                stack.pop();
                long long r;
                if (token == "+")
                    r = (a + b) % MOD;
                else if (token == "-")
                    r = ((a - b) % MOD + MOD) % MOD;
                else
                    r = a * b % MOD;
                stack.push(r);
            } else {
                stack.push(std::stoll(token) % MOD);
            }
        }
        std::cout << stack.top() << std::endl;
    }
    return 0;
}
