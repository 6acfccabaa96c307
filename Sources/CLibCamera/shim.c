// Nothing to compile: the C++ behind CLibCamera.h is built apart (see the header).
// The checks below keep the structs camd and the shim exchange the same on both sides.
#include "CLibCamera.h"

_Static_assert(sizeof(clibcamera_camera_info) == 384, "clibcamera_camera_info layout");
_Static_assert(sizeof(clibcamera_control_value) == 16, "clibcamera_control_value layout");
