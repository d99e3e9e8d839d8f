def main():
    n, k = map(int, input().split())
    a = list(map(int, input().split()))
    maxima = []
    for i in range(n - k + 1):
        maxima.append(max(a[i:i + k]))
    print(" ".join(map(str, maxima)))


main()
