import sys
from math import gcd
def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    table = [list(map(int, data[2:2 + n]))]
    k = 1
    while 2 * k <= n:
        prev = table[-1]
        table.append(list(map(gcd, prev[:n - 2 * k + 1], prev[k:n - k + 1])))
        k *= 2
    total = 0
    pos = 2 + n
    for _ in range(q):
        l = int(data[pos]) - 1; r = int(data[pos + 1]); pos += 2
        j = (r - l).bit_length() - 1
        row = table[j]
        total += gcd(row[l], row[r - (1 << j)])
    print(total)
main()
