import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); h = list(map(int, data[1:1 + n]))
    # sparse table of argmin indices
    table = [list(range(n))]
    k = 1
    while 2 * k <= n:
        prev = table[-1]
        table.append([a if h[a] <= h[b] else b for a, b in zip(prev[:n - 2 * k + 1], prev[k:n - k + 1])])
        k *= 2
    best = 0
    stack = [(0, n)]
    while stack:
        l, r = stack.pop()
        if l >= r:
            continue
        j = (r - l).bit_length() - 1
        a = table[j][l]; b = table[j][r - (1 << j)]
        m = a if h[a] <= h[b] else b
        area = h[m] * (r - l)
        if area > best:
            best = area
        stack.append((l, m)); stack.append((m + 1, r))
    print(best)
main()
