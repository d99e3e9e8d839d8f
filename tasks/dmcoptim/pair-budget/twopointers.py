import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, s = int(data[0]), int(data[1])
    p = sorted(map(int, data[2:2 + n]))
    i, j = 0, n - 1
    count = 0
    while i < j:
        if p[i] + p[j] <= s:
            count += j - i; i += 1
        else:
            j -= 1
    print(count)
main()
