def main():
    n = int(input())
    # groups[g] = (signature, [words]); a group is found by scanning the list
    groups = []
    for _ in range(n):
        word = input().strip()
        signature = "".join(sorted(word))
        for sig, members in groups:
            if sig == signature:
                members.append(word)
                break
        else:
            groups.append((signature, [word]))
    for sig, members in groups:
        if len(members) >= 2:
            print(" ".join(members))


main()
