def shift_char(ch, k):
    if "a" <= ch <= "z":
        return chr((ord(ch) - ord("a") + k) % 26 + ord("a"))
    if "A" <= ch <= "Z":
        return chr((ord(ch) - ord("A") + k) % 26 + ord("A"))
    return ch


def main():
    while True:
        try:
            line = input()
        except EOFError:
            break
        key, _, text = line.partition(" ")
        k = int(key)
        result = ""
        for ch in text:
            result += shift_char(ch, k)
        print(result)


main()
