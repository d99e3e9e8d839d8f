import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); c = list(map(int, data[1:1 + n]))
    inv = 0
    for i in range(n):
        x = c[i]
        for j in range(i + 1, n):
            if c[j] < x:
                inv += 1
    print(inv)
main()
