import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); h = list(map(int, data[1:1 + n]))
    table = [h]
    k = 1
    while 2 * k <= n:
        prev = table[-1]
        table.append([max(prev[i], prev[i + k]) for i in range(n - 2 * k + 1)])
        k *= 2
    total = 0
    for i in range(n):
        x = h[i]
        pos = i + 1
        # greedy descent over powers of two: skip blocks whose maximum is <= x
        for lvl in range(len(table) - 1, -1, -1):
            row = table[lvl]
            if pos < len(row) and row[pos] <= x:
                pos += 1 << lvl
        if pos < n:
            total += pos - i
    print(total)
main()
