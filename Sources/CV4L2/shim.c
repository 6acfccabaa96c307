#include "CV4L2.h"
#include <stddef.h>

int CV4L2_ioctl(int fd, unsigned long request, void *argument) {
    return ioctl(fd, request, argument);
}

const unsigned long CV4L2_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
const unsigned long CV4L2_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
const unsigned long CV4L2_VIDIOC_G_FMT = VIDIOC_G_FMT;
const unsigned long CV4L2_VIDIOC_S_FMT = VIDIOC_S_FMT;
const unsigned long CV4L2_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
const unsigned long CV4L2_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
const unsigned long CV4L2_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
const unsigned long CV4L2_VIDIOC_QBUF = VIDIOC_QBUF;
const unsigned long CV4L2_VIDIOC_DQBUF = VIDIOC_DQBUF;
const unsigned long CV4L2_VIDIOC_STREAMON = VIDIOC_STREAMON;
const unsigned long CV4L2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
const unsigned long CV4L2_VIDIOC_G_PARM = VIDIOC_G_PARM;
const unsigned long CV4L2_VIDIOC_S_PARM = VIDIOC_S_PARM;
const unsigned long CV4L2_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
const unsigned long CV4L2_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
const unsigned long CV4L2_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
const unsigned long CV4L2_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
const unsigned long CV4L2_VIDIOC_G_EXT_CTRLS = VIDIOC_G_EXT_CTRLS;
const unsigned long CV4L2_VIDIOC_S_EXT_CTRLS = VIDIOC_S_EXT_CTRLS;
const unsigned long CV4L2_VIDIOC_G_INPUT = VIDIOC_G_INPUT;

const unsigned int CV4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
const unsigned int CV4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
const unsigned int CV4L2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
const unsigned int CV4L2_PIX_FMT_GREY = V4L2_PIX_FMT_GREY;

// The layouts the Swift side relies on (64-bit Linux), checked at build time.
_Static_assert(sizeof(struct v4l2_capability) == 104, "v4l2_capability layout");
_Static_assert(sizeof(struct v4l2_format) == 208, "v4l2_format layout");
_Static_assert(sizeof(struct v4l2_buffer) == 88, "v4l2_buffer layout");
_Static_assert(sizeof(struct v4l2_requestbuffers) == 20, "v4l2_requestbuffers layout");
_Static_assert(sizeof(struct v4l2_streamparm) == 204, "v4l2_streamparm layout");
_Static_assert(sizeof(struct v4l2_query_ext_ctrl) == 232, "v4l2_query_ext_ctrl layout");
_Static_assert(sizeof(struct v4l2_querymenu) == 44, "v4l2_querymenu layout");
_Static_assert(sizeof(struct v4l2_ext_control) == 20, "v4l2_ext_control layout");
_Static_assert(offsetof(struct v4l2_buffer, m) == 64, "v4l2_buffer.m offset");
