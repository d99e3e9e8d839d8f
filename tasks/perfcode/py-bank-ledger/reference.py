import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    accounts = data[1:2 * n + 1:2]
    amounts = map(int, data[2:2 * n + 2:2])
    balances = {}
    get = balances.get
    running = []
    append = running.append
    for account, amount in zip(accounts, amounts):
        balance = balances[account] = get(account, 0) + amount
        append(balance)
    # formatting and joining run in C (map over bytes.__mod__), not in the loop above
    out = b"\n".join(map(b"%s %d".__mod__, zip(accounts, running)))
    sys.stdout.buffer.write(out + b"\n")


main()
