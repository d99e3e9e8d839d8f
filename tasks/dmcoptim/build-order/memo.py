import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    t = [0] + list(map(int, data[2:2 + n]))
    succ = [[] for _ in range(n + 1)]
    for i in range(m):
        succ[int(data[2 + n + 2 * i])].append(int(data[3 + n + 2 * i]))
    down = [-1] * (n + 1)   # heaviest chain starting at v
    for root in range(1, n + 1):
        if down[root] >= 0:
            continue
        stack = [root]
        while stack:
            v = stack[-1]
            pending = [w for w in succ[v] if down[w] < 0]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            if down[v] < 0:
                down[v] = t[v] + max((down[w] for w in succ[v]), default=0)
    print(max(down[1:]))
main()
