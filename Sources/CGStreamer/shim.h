// GStreamer 1.22 (Debian 12): the RTSP server library (gst-rtsp-server) and appsrc
// (gstreamer-app), with the RTSP message library under them (gstreamer-rtsp: credentials).
// Swift imports all camd uses of them, so this only gathers the headers.
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/rtsp-server/rtsp-server.h>
