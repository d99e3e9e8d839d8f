#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

static std::string escape(const std::string &text)
{
    std::ostringstream out;
    out << '"';
    for (char c : text) {
        unsigned char u = (unsigned char)c;
        if (c == '"')
            out << "\\\"";
        else if (c == '\\')
            out << "\\\\";
        else if (c == '\n')
            out << "\\n";
        else if (c == '\t')
            out << "\\t";
        else if (c == '\b')
            out << "\\b";
        else if (c == '\f')
            out << "\\f";
        else if (c == '\r')
            out << "\\r";
        else if (u < 0x20 || u == 0x7f)
            out << "\\u" << std::hex << std::setw(4) << std::setfill('0') << (int)u;
        else
            out << c;
    }
    out << '"';
    return out.str();
}

int main()
{
    std::string line;
    while (std::getline(std::cin, line))
        std::cout << escape(line) << std::endl;
    return 0;
}
