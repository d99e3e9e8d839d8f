import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); s = list(map(int, data[2:2 + n]))
    count = 0
    for i in range(n):
        x = s[i]
        for j in range(i + 1, n):
            if not x & s[j]:
                count += 1
    print(count)
main()
