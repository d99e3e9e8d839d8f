#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>

struct Totals {
    long long rows = 0;
    long long qty = 0;
    long long revenue = 0;
};

static std::vector<std::string> split(const std::string &line)
{
    static const std::regex comma(",");
    std::vector<std::string> fields(
        std::sregex_token_iterator(line.begin(), line.end(), comma, -1),
        std::sregex_token_iterator());
    return fields;
}

int main()
{
    std::string line;
    if (!std::getline(std::cin, line))
        return 0;
    std::map<std::string, int> column;
    std::vector<std::string> header = split(line);
    for (size_t i = 0; i < header.size(); i++)
        column[header[i]] = (int)i;
    std::map<std::string, Totals> groups;
    while (std::getline(std::cin, line)) {
        if (line.empty())
            continue;
        std::vector<std::string> fields = split(line);
        std::string region = fields[column["region"]];
        long long qty = std::stoll(fields[column["qty"]]);
        long long price = std::stoll(fields[column["price"]]);
        Totals &t = groups[region];
        t.rows += 1;
        t.qty += qty;
        t.revenue += qty * price;
    }
    for (auto &entry : groups)
        std::cout << entry.first << " " << entry.second.rows << " " << entry.second.qty << " "
                  << entry.second.revenue << std::endl;
    return 0;
}
