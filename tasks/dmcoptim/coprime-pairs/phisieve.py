import sys
def main():
    n = int(sys.stdin.read())
    phi = list(range(n + 1))
    for p in range(2, n + 1):
        if phi[p] == p:
            for m in range(p, n + 1, p):
                phi[m] -= phi[m] // p
    print(sum(phi) - 1)  # phi(1) = 1 belongs to no pair a < b
main()
