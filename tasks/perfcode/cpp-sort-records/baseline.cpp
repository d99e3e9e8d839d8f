#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <vector>

struct Record {
    std::string name;
    std::string dept;
    long long salary;
};

static bool before(Record a, Record b)
{
    if (a.dept != b.dept)
        return a.dept < b.dept;
    if (a.salary != b.salary)
        return a.salary > b.salary;
    return a.name < b.name;
}

int main()
{
    int n;
    std::cin >> n;
    std::vector<Record> records;
    for (int i = 0; i < n; i++) {
        Record r;
        std::cin >> r.name >> r.dept >> r.salary;
        records.push_back(r);
    }
    std::sort(records.begin(), records.end(), before);
    std::map<std::string, int> rank;
    for (const Record &r : records)
        std::cout << r.dept << " " << ++rank[r.dept] << " " << r.name << " " << r.salary << "\n";
    return 0;
}
