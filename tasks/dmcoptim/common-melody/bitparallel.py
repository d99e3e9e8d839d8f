import sys
def main():
    a, b = sys.stdin.read().split()[:2]
    m = len(b)
    match = {}
    for j, c in enumerate(b):
        match[c] = match.get(c, 0) | (1 << j)
    mask = (1 << m) - 1
    v = mask
    for c in a:
        u = v & match.get(c, 0)
        v = ((v + u) | (v - u)) & mask
    print(m - bin(v).count("1"))
main()
