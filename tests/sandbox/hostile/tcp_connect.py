# attack: connect to a TCP server the test runs on the host's 127.0.0.1, and to a host abstract unix socket
# verdict: ok
# limits: time_s=1 wall_s=2 memory_mb=128
# stdin: {port}
# check: no_connection
# bwrap_only: true
# reason: without a network namespace the host's loopback is reachable
import socket
import sys

token = sys.argv[1] if len(sys.argv) > 1 else "x"
port = int(sys.stdin.read().split()[0])
for host in ("127.0.0.1", "localhost"):
    try:
        s = socket.create_connection((host, port), timeout=0.3)
        s.sendall(b"ESCAPED hello from the sandbox\n")
        s.close()
        print(f"ESCAPED: connected to {host}:{port}", flush=True)
    except OSError as e:
        print(f"blocked: {host}:{port}: {e}", flush=True)
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(0.3)
    s.connect(f"\0codegym-hostile-{token}")
    s.sendall(b"ESCAPED hello\n")
    print("ESCAPED: connected to the host's abstract unix socket", flush=True)
except OSError as e:
    print(f"blocked: abstract unix socket: {e}", flush=True)
