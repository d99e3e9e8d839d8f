import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, s = int(data[0]), int(data[1])
    p = list(map(int, data[2:2 + n]))
    count = 0
    for i in range(n):
        lim = s - p[i]
        for j in range(i + 1, n):
            if p[j] <= lim:
                count += 1
    print(count)
main()
