import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); r = list(map(int, data[1:1 + n]))
    best = [1] * n
    for i in range(n):
        x = r[i]; b = 1
        for j in range(i):
            if r[j] < x and best[j] >= b:
                b = best[j] + 1
        best[i] = b
    print(max(best))
main()
