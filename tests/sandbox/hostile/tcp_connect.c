// attack: connect to a TCP server the test runs on the host's 127.0.0.1, and to a host abstract unix socket
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// stdin: {port}
// check: no_connection
// bwrap_only: true
// reason: without a network namespace the host's loopback is reachable
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int port = 0;
    if (scanf("%d", &port) != 1) return 2;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0) {
        if (write(s, "ESCAPED hello\n", 14) < 0) {}
        printf("ESCAPED: connected to 127.0.0.1:%d\n", port);
    } else {
        printf("blocked: 127.0.0.1:%d\n", port);
    }
    if (s >= 0) close(s);
    int u = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un un = {0};
    un.sun_family = AF_UNIX;
    int len = snprintf(un.sun_path + 1, sizeof un.sun_path - 1, "codegym-hostile-%s", argc > 1 ? argv[1] : "x");
    if (u >= 0 && connect(u, (struct sockaddr *)&un, offsetof(struct sockaddr_un, sun_path) + 1 + len) == 0) {
        if (write(u, "ESCAPED hello\n", 14) < 0) {}
        printf("ESCAPED: connected to the host's abstract unix socket\n");
    } else {
        printf("blocked: abstract unix socket\n");
    }
    return 0;
}
