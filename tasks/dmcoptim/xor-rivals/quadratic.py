import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); b = list(map(int, data[1:1 + n]))
    best = 0
    for i in range(n):
        x = b[i]
        for j in range(i + 1, n):
            y = x ^ b[j]
            if y > best:
                best = y
    print(best)
main()
