import sys
from itertools import accumulate


def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    # van Herk / Gil-Werman: cut the array into blocks of k; the maximum of a window is
    # max(suffix maximum in its first block, prefix maximum in the next one). Both are
    # running maxima, computed in C by itertools.accumulate.
    prefix = []
    suffix = []
    for start in range(0, n, k):
        block = a[start:start + k]
        prefix.extend(accumulate(block, max))
        suffix.extend(reversed(list(accumulate(reversed(block), max))))
    # window i covers [i, i+k-1]: suffix[i] covers i..end of its block, prefix[i+k-1]
    # covers the start of the block of i+k-1 up to i+k-1; together they cover the window
    maxima = list(map(max, suffix[:n - k + 1], prefix[k - 1:]))
    sys.stdout.write(" ".join(map(str, maxima)) + "\n")


main()
