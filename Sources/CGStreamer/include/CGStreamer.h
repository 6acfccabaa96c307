// GStreamer 1.22 (Debian 12): the RTSP server library (gst-rtsp-server) and appsrc
// (gstreamer-app), with the RTSP message library under them (gstreamer-rtsp: credentials).
// Swift imports all camd uses of them, so this gathers the headers, and declares the loader:
// camd does not link GStreamer; lazy.c (scripts/gen-lazy-stubs) loads its libraries when the
// RTSP server first starts, so a camd without RTSP never maps them (issue 16).
#include <gst/gst.h>
#include <gst/app/gstappsrc.h>
#include <gst/rtsp-server/rtsp-server.h>

/// Loads GStreamer's libraries if they are not yet: NULL, or why they could not be (once
/// tried, the answer stays). Call it before the first GStreamer function; a call without it
/// that finds the libraries missing aborts.
const char *CGStreamer_load(void);
