import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    total = 0
    for i in range(n - k + 1):
        best = a[i]
        for j in range(i + 1, i + k):
            if a[j] > best:
                best = a[j]
        total += best
    print(total)
main()
