import sys
def main():
    g = sys.stdin.readline().strip(); m = sys.stdin.readline().strip()
    k = len(m)
    fail = [0] * k
    j = 0
    for i in range(1, k):
        while j and m[i] != m[j]:
            j = fail[j - 1]
        if m[i] == m[j]:
            j += 1
        fail[i] = j
    count = 0; j = 0
    for ch in g:
        while j and ch != m[j]:
            j = fail[j - 1]
        if ch == m[j]:
            j += 1
            if j == k:
                count += 1; j = fail[j - 1]
    print(count)
main()
