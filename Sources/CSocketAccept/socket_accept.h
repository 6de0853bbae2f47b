// accept(2) whose descriptor is close-on-exec and non-blocking from its first moment:
// with accept and then fcntl, a child started by another thread in between (a hook,
// ffmpeg) would inherit the connection. glibc declares accept4 only for _GNU_SOURCE,
// which Swift's Glibc module leaves out, hence its prototype here.
#include <sys/socket.h>

extern int accept4(int socket, struct sockaddr *address, socklen_t *length, int flags);

static inline int sentry_accept_private(int socket, struct sockaddr *address, socklen_t *length) {
    return accept4(socket, address, length, SOCK_CLOEXEC | SOCK_NONBLOCK);
}
