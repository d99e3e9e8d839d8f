import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    label = list(range(n + 1))
    groups = n
    total = 0
    for t in range(m):
        a = label[int(data[2 + 2 * t])]; b = label[int(data[3 + 2 * t])]
        if a != b:
            for i in range(1, n + 1):
                if label[i] == b:
                    label[i] = a
            groups -= 1
        total += groups
    print(total)
main()
