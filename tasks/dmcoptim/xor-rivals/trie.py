import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); b = list(map(int, data[1:1 + n]))
    zero = [0]; one = [0]   # child indices, 0 = absent (node 0 is the root)
    def insert(x):
        node = 0
        for k in range(29, -1, -1):
            ch = one if (x >> k) & 1 else zero
            if not ch[node]:
                zero.append(0); one.append(0)
                ch[node] = len(zero) - 1
            node = ch[node]
    insert(b[0])
    best = 0
    for x in b[1:]:
        node = 0; cur = 0
        for k in range(29, -1, -1):
            if (x >> k) & 1:
                want, other = zero, one
            else:
                want, other = one, zero
            if want[node]:
                cur |= 1 << k; node = want[node]
            else:
                node = other[node]
        if cur > best:
            best = cur
        insert(x)
    print(best)
main()
