import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, b = int(data[0]), int(data[1])
    c = list(map(int, data[2:2 + n]))
    # the window never shrinks: it slides when over budget, so its final length is the answer
    lo = 0; s = 0
    for x in c:
        s += x
        if s > b:
            s -= c[lo]; lo += 1
    print(n - lo)
main()
