#include <cstdint>
#include <cstdio>
#include <vector>

// One flat row-major image; the box sum is separable: a vertical running sum per column
// (updated row by row, one add and one subtract per pixel) feeds a horizontal running sum
// along the row. O(h w) whatever r is, and every array is walked with unit stride.
// Window sizes are products of the clipped vertical and horizontal extents.
int main()
{
    int h, w, r;
    uint32_t x;
    if (scanf("%d %d %d %u", &h, &w, &r, &x) != 4)
        return 1;
    std::vector<uint8_t> img((size_t)h * w);
    for (auto &v : img) {
        x = x * 1103515245u + 12345u;
        v = (uint8_t)((x >> 16) & 255);
    }
    std::vector<int32_t> col(w, 0);          // vertical sums over rows [i-r, i+r] clipped
    std::vector<int32_t> colcount(h);
    for (int i = 0; i < h; i++) {
        int lo = i - r < 0 ? 0 : i - r, hi = i + r >= h ? h - 1 : i + r;
        colcount[i] = hi - lo + 1;
    }
    std::vector<int32_t> rowcount(w);
    for (int j = 0; j < w; j++) {
        int lo = j - r < 0 ? 0 : j - r, hi = j + r >= w ? w - 1 : j + r;
        rowcount[j] = hi - lo + 1;
    }
    for (int y = 0; y < r && y < h; y++) {
        const uint8_t *row = &img[(size_t)y * w];
        for (int j = 0; j < w; j++)
            col[j] += row[j];
    }
    uint64_t checksum = 0;
    long long total = 0;
    for (int i = 0; i < h; i++) {
        if (i + r < h) {                      // row i+r enters the window
            const uint8_t *row = &img[(size_t)(i + r) * w];
            for (int j = 0; j < w; j++)
                col[j] += row[j];
        }
        if (i - r - 1 >= 0) {                 // row i-r-1 leaves it
            const uint8_t *row = &img[(size_t)(i - r - 1) * w];
            for (int j = 0; j < w; j++)
                col[j] -= row[j];
        }
        int64_t s = 0;
        for (int z = 0; z < r && z < w; z++)
            s += col[z];
        for (int j = 0; j < w; j++) {
            if (j + r < w)
                s += col[j + r];
            if (j - r - 1 >= 0)
                s -= col[j - r - 1];
            int v = (int)(s / (colcount[i] * rowcount[j]));
            checksum = checksum * 1000003u + (uint64_t)v;
            total += v;
        }
    }
    printf("%llu %lld\n", (unsigned long long)checksum, total);
    return 0;
}
