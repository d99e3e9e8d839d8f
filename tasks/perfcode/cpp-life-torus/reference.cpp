#include <cstdio>
#include <cstring>
#include <vector>

// Dense byte grids with a one-cell halo that is refreshed from the opposite edge
// before each generation, so the inner loop needs no modulo and no branches.
int main()
{
    int h, w, t;
    if (scanf("%d %d %d", &h, &w, &t) != 3)
        return 1;
    const int W = w + 2;
    std::vector<unsigned char> cur((size_t)(h + 2) * W), nxt((size_t)(h + 2) * W);
    std::vector<char> row((size_t)w + 1);
    for (int r = 1; r <= h; r++) {
        if (scanf("%s", row.data()) != 1)
            return 1;
        for (int c = 1; c <= w; c++)
            cur[(size_t)r * W + c] = row[c - 1] == '#';
    }
    for (int step = 0; step < t; step++) {
        unsigned char *g = cur.data();
        for (int r = 1; r <= h; r++) {
            g[(size_t)r * W] = g[(size_t)r * W + w];
            g[(size_t)r * W + w + 1] = g[(size_t)r * W + 1];
        }
        std::memcpy(g, g + (size_t)h * W, W);
        std::memcpy(g + (size_t)(h + 1) * W, g + W, W);
        unsigned char *o = nxt.data();
        for (int r = 1; r <= h; r++) {
            const unsigned char *up = g + (size_t)(r - 1) * W, *mid = up + W, *down = mid + W;
            unsigned char *out = o + (size_t)r * W;
            for (int c = 1; c <= w; c++) {
                int n = up[c - 1] + up[c] + up[c + 1] + mid[c - 1] + mid[c + 1] +
                        down[c - 1] + down[c] + down[c + 1];
                out[c] = (n == 3) | ((n == 2) & mid[c]);
            }
        }
        cur.swap(nxt);
    }
    std::vector<char> out((size_t)h * (w + 1));
    for (int r = 1; r <= h; r++) {
        char *line = out.data() + (size_t)(r - 1) * (w + 1);
        for (int c = 1; c <= w; c++)
            line[c - 1] = cur[(size_t)r * W + c] ? '#' : '.';
        line[w] = '\n';
    }
    fwrite(out.data(), 1, out.size(), stdout);
    return 0;
}
