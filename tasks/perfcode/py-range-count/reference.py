import sys
from bisect import bisect_left, bisect_right


def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    values = sorted(map(int, data[2:2 + n]))
    bounds = list(map(int, data[2 + n:2 + n + 2 * q]))
    out = [bisect_right(values, bounds[i + 1]) - bisect_left(values, bounds[i])
           for i in range(0, 2 * q, 2)]
    sys.stdout.write("\n".join(map(str, out)))
    if out:
        sys.stdout.write("\n")


main()
