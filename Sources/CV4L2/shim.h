// The parts of V4L2 and libv4l2 that Swift cannot import on its own:
// variadic functions and the function-like VIDIOC_* macros.
#include <fcntl.h>
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <sys/mman.h>

#include <sys/ioctl.h>

static inline int sentry_ioctl(int fd, unsigned long request, void *argument) { return ioctl(fd, request, argument); }
static inline int sentry_v4l2_fd_open(int fd) { return v4l2_fd_open(fd, 0); }
static inline int sentry_v4l2_ioctl(int fd, unsigned long request, void *argument) { return v4l2_ioctl(fd, request, argument); }

static const unsigned long SENTRY_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long SENTRY_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long SENTRY_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long SENTRY_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long SENTRY_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long SENTRY_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long SENTRY_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long SENTRY_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long SENTRY_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long SENTRY_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long SENTRY_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long SENTRY_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long SENTRY_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
