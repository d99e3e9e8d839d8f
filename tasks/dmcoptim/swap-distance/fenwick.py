import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); c = list(map(int, data[1:1 + n]))
    rank = {v: i + 1 for i, v in enumerate(sorted(set(c)))}
    m = len(rank)
    tree = [0] * (m + 1)
    inv = 0
    for seen, v in enumerate(c):
        r = rank[v]
        # number of earlier values <= v
        i = r; s = 0
        while i:
            s += tree[i]; i &= i - 1
        inv += seen - s
        i = r
        while i <= m:
            tree[i] += 1; i += i & -i
    print(inv)
main()
