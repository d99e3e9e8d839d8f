import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    s = list(map(int, data[1:1 + 2 * n:2])); e = list(map(int, data[2:2 + 2 * n:2]))
    best = 0
    for i in range(n):
        t = s[i]; c = 0
        for j in range(n):
            if s[j] <= t < e[j]:
                c += 1
        if c > best:
            best = c
    print(best)
main()
