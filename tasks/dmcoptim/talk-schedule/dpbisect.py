import sys
from bisect import bisect_left
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    talks = sorted(zip(map(int, data[2:2 + 2 * n:2]), map(int, data[1:1 + 2 * n:2])))
    ends = [e for e, _ in talks]
    pref = [0] * (n + 1)   # pref[k] = best count using only the first k talks
    for i, (e, s) in enumerate(talks):
        k = bisect_left(ends, s)   # talks ending strictly before s
        v = pref[k] + 1
        pref[i + 1] = v if v > pref[i] else pref[i]
    print(pref[n])
main()
