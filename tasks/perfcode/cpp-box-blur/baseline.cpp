#include <algorithm>
#include <cstdint>
#include <iostream>
#include <vector>

int main()
{
    int h, w, r;
    uint32_t x;
    std::cin >> h >> w >> r >> x;
    std::vector<std::vector<int>> img(h, std::vector<int>(w));
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            x = x * 1103515245u + 12345u;
            img[i][j] = (int)((x >> 16) & 255);
        }
    // out[i][j] = mean of the pixels in the (2r+1) x (2r+1) window clipped to the image
    std::vector<std::vector<int>> out(h, std::vector<int>(w));
    for (int j = 0; j < w; j++) {
        for (int i = 0; i < h; i++) {
            long sum = 0, count = 0;
            for (int di = -r; di <= r; di++)
                for (int dj = -r; dj <= r; dj++) {
                    int y = i + di, z = j + dj;
                    if (y >= 0 && y < h && z >= 0 && z < w) {
                        sum += img[y][z];
                        count++;
                    }
                }
            out[i][j] = (int)(sum / count);
        }
    }
    uint64_t checksum = 0;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++)
            checksum = checksum * 1000003u + (uint64_t)out[i][j];
    long long total = 0;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++)
            total += out[i][j];
    std::cout << checksum << " " << total << std::endl;
    return 0;
}
