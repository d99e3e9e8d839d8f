from datetime import datetime

EPOCH = datetime(1970, 1, 1)


def main():
    stats = {}
    while True:
        try:
            line = input()
        except EOFError:
            break
        if not line.strip():
            continue
        stamp, service, status, latency = line.split()
        t = int((datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S") - EPOCH).total_seconds())
        status, latency = int(status), int(latency)
        if service not in stats:
            stats[service] = [0, 0, 0, 0, t, t]
        s = stats[service]
        s[0] += 1
        if status >= 500:
            s[1] += 1
        s[2] = max(s[2], latency)
        s[3] += latency
        s[4] = min(s[4], t)
        s[5] = max(s[5], t)
    for service in sorted(stats):
        count, errors, worst, total, first, last = stats[service]
        print(service, count, errors, worst, total // count, last - first)


main()
