// Which core a thread runs on, and which cores it may run on: for keeping the
// interpreter's helper threads off the caller's core (see WorkerPool).
#include <stddef.h>
#include <sys/types.h>

// glibc's, declared only under _GNU_SOURCE, which would change the system headers'
// structures for this module alone; the masks are cpu_set_t's bits.
extern int sched_getcpu(void);
extern pid_t gettid(void);
extern int sched_getaffinity(pid_t thread, size_t size, void *mask);
extern int sched_setaffinity(pid_t thread, size_t size, const void *mask);
