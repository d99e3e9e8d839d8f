def main():
    n, q = map(int, input().split())
    values = list(map(int, input().split()))
    for _ in range(q):
        lo, hi = map(int, input().split())
        count = 0
        for x in values:
            if lo <= x <= hi:
                count += 1
        print(count)


main()
