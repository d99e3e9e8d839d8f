import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); v = list(map(int, data[1:1 + n]))
    total = sum(v)
    ok = [False] * (total + 1)
    ok[0] = True
    hi = 0
    for x in v:
        hi += x
        for s in range(hi, x - 1, -1):
            if not ok[s] and ok[s - x]:
                ok[s] = True
    print(sum(ok))
main()
