def main():
    n = int(input())
    for _ in range(n):
        a = int(input())
        count = 0
        d = 1
        while d * d <= a:
            if a % d == 0:
                count += 1 if d * d == a else 2
            d += 1
        print(count)


main()
