// What Swift cannot import from <linux/videodev2.h>: the VIDIOC_* request
// numbers and V4L2_PIX_FMT_* codes are function-like macros, and ioctl(2) is
// variadic. Nothing here has logic; everything else is Swift.
#ifndef CV4L2_H
#define CV4L2_H

#include <linux/videodev2.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>

/// ioctl(2) with one pointer argument, callable from Swift.
int CV4L2_ioctl(int fd, unsigned long request, void *argument);

extern const unsigned long CV4L2_VIDIOC_QUERYCAP;
extern const unsigned long CV4L2_VIDIOC_ENUM_FMT;
extern const unsigned long CV4L2_VIDIOC_G_FMT;
extern const unsigned long CV4L2_VIDIOC_S_FMT;
extern const unsigned long CV4L2_VIDIOC_TRY_FMT;
extern const unsigned long CV4L2_VIDIOC_REQBUFS;
extern const unsigned long CV4L2_VIDIOC_QUERYBUF;
extern const unsigned long CV4L2_VIDIOC_QBUF;
extern const unsigned long CV4L2_VIDIOC_DQBUF;
extern const unsigned long CV4L2_VIDIOC_STREAMON;
extern const unsigned long CV4L2_VIDIOC_STREAMOFF;
extern const unsigned long CV4L2_VIDIOC_G_PARM;
extern const unsigned long CV4L2_VIDIOC_S_PARM;
extern const unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES;
extern const unsigned long CV4L2_VIDIOC_ENUM_FRAMEINTERVALS;
extern const unsigned long CV4L2_VIDIOC_QUERY_EXT_CTRL;
extern const unsigned long CV4L2_VIDIOC_QUERYMENU;
extern const unsigned long CV4L2_VIDIOC_G_EXT_CTRLS;
extern const unsigned long CV4L2_VIDIOC_S_EXT_CTRLS;
extern const unsigned long CV4L2_VIDIOC_G_INPUT;

/// A few pixel format codes, so tests can check Swift's own FourCC arithmetic.
extern const unsigned int CV4L2_PIX_FMT_YUYV;
extern const unsigned int CV4L2_PIX_FMT_MJPEG;
extern const unsigned int CV4L2_PIX_FMT_NV12;
extern const unsigned int CV4L2_PIX_FMT_GREY;

#endif
