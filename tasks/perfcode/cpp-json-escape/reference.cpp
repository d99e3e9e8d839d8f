#include <cstdio>
#include <cstring>
#include <string>

// A 256-entry table says how each byte is written; runs of bytes that need no escaping
// are copied with one memcpy; the whole output goes into one string written once.
static unsigned char kind[256];   // 0: copy as is, 1: two-character escape, 2: \u00XX

int main()
{
    static const char *hex = "0123456789abcdef";
    char short_escape[256] = {0};
    for (int c = 0; c < 256; c++)
        kind[c] = (c < 0x20 || c == 0x7f) ? 2 : 0;
    const char *pairs = "\"\"\\\\\bb\ff\nn\rr\tt";
    for (const char *p = pairs; *p; p += 2) {
        kind[(unsigned char)p[0]] = 1;
        short_escape[(unsigned char)p[0]] = p[1];
    }
    std::string in;
    char chunk[1 << 16];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        in.append(chunk, got);
    std::string out;
    out.reserve(in.size() + in.size() / 4 + 64);
    size_t i = 0, n = in.size();
    while (i < n) {
        size_t eol = in.find('\n', i);
        if (eol == std::string::npos)
            eol = n;
        out.push_back('"');
        size_t run = i;
        for (size_t k = i; k < eol; k++) {
            unsigned char c = (unsigned char)in[k];
            if (kind[c] == 0)
                continue;
            out.append(in, run, k - run);
            run = k + 1;
            if (kind[c] == 1) {
                out.push_back('\\');
                out.push_back(short_escape[c]);
            } else {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                out.append(u, 6);
            }
        }
        out.append(in, run, eol - run);
        out.append("\"\n", 2);
        i = eol + 1;
    }
    fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
