import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); b = list(map(int, data[1:1 + n]))
    ans = 0
    for k in range(29, -1, -1):
        cand = ans | (1 << k)
        prefixes = {x >> k for x in b}
        # cand is achievable iff two prefixes p, q have p ^ q == cand >> k
        t = cand >> k
        if any((p ^ t) in prefixes for p in prefixes):
            ans = cand
    print(ans)
main()
