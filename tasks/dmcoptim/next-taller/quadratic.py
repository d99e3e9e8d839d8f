import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); h = list(map(int, data[1:1 + n]))
    total = 0
    for i in range(n):
        x = h[i]
        for j in range(i + 1, n):
            if h[j] > x:
                total += j - i
                break
    print(total)
main()
