def main():
    n = int(input())
    balances = {}
    for _ in range(n):
        account, amount = input().split()
        balance = balances.get(account, 0) + int(amount)
        balances[account] = balance
        # flushed, so that a reader of the pipe sees every balance as soon as it changes
        print(account, balance, flush=True)


main()
