// A descriptor that becomes readable when a child process ends (Linux 5.3+), so a
// thread can wait for it with poll(2) and a timeout. syscall(2) is variadic, which
// Swift does not import, hence this one line of C.
#include <sys/syscall.h>
#include <unistd.h>

static inline int sentry_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }
