import sys
from collections import Counter
def main():
    data = sys.stdin.buffer.read().split()
    n, b = int(data[0]), int(data[1])
    cnt = Counter(map(int, data[2:2 + n]))
    full = (1 << b) - 1
    ordered = 0
    for x, c in cnt.items():
        comp = full ^ x
        sub = comp; tot = 0
        while True:
            tot += cnt.get(sub, 0)
            if sub == 0:
                break
            sub = (sub - 1) & comp
        ordered += c * tot
    # x AND x = 0 only for x = 0: remove the pairs of a worker with itself
    ordered -= cnt.get(0, 0)
    print(ordered // 2)
main()
