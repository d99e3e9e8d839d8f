import sys
def main():
    s = sys.stdin.readline().strip()
    n = len(s)
    # pal[l] holds, for the current length, whether s[l:l+len] is a palindrome
    prev2 = [True] * (n + 1)          # length 0
    prev1 = [True] * n                # length 1
    count = n
    for length in range(2, n + 1):
        cur = [False] * (n - length + 1)
        for l in range(n - length + 1):
            if s[l] == s[l + length - 1] and prev2[l + 1]:
                cur[l] = True
                count += 1
        prev2, prev1 = prev1, cur
    print(count)
main()
