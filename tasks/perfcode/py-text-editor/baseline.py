def main():
    q = int(input())
    doc = ""
    for _ in range(q):
        parts = input().split()
        if parts[0] == "+":
            doc = doc + parts[1]
        elif parts[0] == "-":
            doc = doc[:len(doc) - int(parts[1])]
        else:
            i, j = int(parts[1]), int(parts[2])
            print(doc[i - 1:j])
    print(len(doc))


main()
