import sys
def main():
    g = sys.stdin.readline().strip(); m = sys.stdin.readline().strip()
    n, k = len(g), len(m)
    count = 0
    for i in range(n - k + 1):
        j = 0
        while j < k and g[i + j] == m[j]:
            j += 1
        if j == k:
            count += 1
    print(count)
main()
