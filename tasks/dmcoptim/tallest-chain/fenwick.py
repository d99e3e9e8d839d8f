import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); r = list(map(int, data[1:1 + n]))
    rank = {v: i + 1 for i, v in enumerate(sorted(set(r)))}
    m = len(rank)
    tree = [0] * (m + 1)
    ans = 0
    for v in r:
        i = rank[v] - 1; b = 0
        while i:
            if tree[i] > b:
                b = tree[i]
            i &= i - 1
        b += 1
        if b > ans:
            ans = b
        i = rank[v]
        while i <= m:
            if tree[i] < b:
                tree[i] = b
            i += i & -i
    print(ans)
main()
