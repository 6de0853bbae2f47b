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
static const unsigned long SENTRY_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long SENTRY_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long SENTRY_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long SENTRY_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long SENTRY_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long SENTRY_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long SENTRY_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long SENTRY_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long SENTRY_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;

static const unsigned long SENTRY_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long SENTRY_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long SENTRY_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned int SENTRY_CID_GAIN = V4L2_CID_GAIN;
static const unsigned int SENTRY_CID_AUTOGAIN = V4L2_CID_AUTOGAIN;
static const unsigned int SENTRY_CID_EXPOSURE_ABSOLUTE = V4L2_CID_EXPOSURE_ABSOLUTE;
static const unsigned int SENTRY_CID_EXPOSURE_AUTO = V4L2_CID_EXPOSURE_AUTO;
