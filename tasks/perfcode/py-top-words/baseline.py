def is_letter(ch):
    return ("a" <= ch <= "z") or ("A" <= ch <= "Z")


def main():
    k = int(input())
    words = []
    counts = []
    while True:
        try:
            line = input()
        except EOFError:
            break
        cur = ""
        for ch in line + " ":
            if is_letter(ch):
                cur += ch.lower()
            elif cur:
                if cur in words:
                    counts[words.index(cur)] += 1
                else:
                    words.append(cur)
                    counts.append(1)
                cur = ""
    pairs = list(zip(words, counts))
    pairs.sort(key=lambda p: (-p[1], p[0]))
    for word, count in pairs[:k]:
        print(word, count)


main()
