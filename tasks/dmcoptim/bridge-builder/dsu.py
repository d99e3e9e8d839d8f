import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    parent = list(range(n + 1))
    size = [1] * (n + 1)
    groups = n
    total = 0
    it = iter(data[2:2 + 2 * m])
    for u, v in zip(it, it):
        a = int(u)
        while parent[a] != a:
            parent[a] = parent[parent[a]]; a = parent[a]
        b = int(v)
        while parent[b] != b:
            parent[b] = parent[parent[b]]; b = parent[b]
        if a != b:
            if size[a] < size[b]:
                a, b = b, a
            parent[b] = a; size[a] += size[b]
            groups -= 1
        total += groups
    print(total)
main()
