import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, b = int(data[0]), int(data[1])
    c = list(map(int, data[2:2 + n]))
    best = 0
    for i in range(n):
        s = 0; j = i
        while j < n and s + c[j] <= b:
            s += c[j]; j += 1
        if j - i > best:
            best = j - i
    print(best)
main()
