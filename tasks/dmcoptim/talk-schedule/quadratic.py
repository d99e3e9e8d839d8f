import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    talks = sorted(zip(map(int, data[2:2 + 2 * n:2]), map(int, data[1:1 + 2 * n:2])))  # (end, start)
    best = [0] * n
    for i in range(n):
        e, s = talks[i]
        b = 0
        for j in range(i):
            if talks[j][0] < s and best[j] > b:
                b = best[j]
        best[i] = b + 1
    print(max(best))
main()
