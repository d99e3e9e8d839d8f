import sys
def main():
    s = sys.stdin.readline().strip()
    best = 0
    for text, opening in ((s, "("), (s[::-1], ")")):
        o = c = 0
        for ch in text:
            if ch == opening:
                o += 1
            else:
                c += 1
                if c > o:
                    o = c = 0
                elif c == o and 2 * c > best:
                    best = 2 * c
    print(best)
main()
