import sys
def main():
    a, b = sys.stdin.read().split()[:2]
    m = len(b)
    prev = [0] * (m + 1)
    for ai in a:
        cur = [0] * (m + 1)
        left = 0
        for j in range(m):
            if b[j] == ai:
                v = prev[j] + 1
            else:
                v = prev[j + 1]
                if left > v:
                    v = left
            cur[j + 1] = v
            left = v
        prev = cur
    print(prev[m])
main()
