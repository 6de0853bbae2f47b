// A descriptor that becomes readable when a child process ends (Linux 5.3+), so a
// thread can wait for it with poll(2) and a timeout. syscall(2) is variadic, which
// Swift does not import, hence this one line of C.
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int sentry_pidfd_open(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

// A child gets descriptors 0-2 and nothing else of sentry's (a socket, the serial
// port, a pipe made without O_CLOEXEC): glibc 2.34+, declared only for _GNU_SOURCE.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
