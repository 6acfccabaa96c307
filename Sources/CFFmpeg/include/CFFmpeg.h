// FFmpeg's libraries (libavcodec, libavformat, libavutil; 5.1 in Debian 12).
// camd does not link them: lazy.c (scripts/gen-lazy-stubs) loads them on first use, so a
// camera that never makes video never maps them (issue 16). Besides that, only what Swift
// cannot import: the error macros, which are function-like or casts.
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>

/// `AVERROR_EOF`: the end of a stream (FFERRTAG('E','O','F',' ')).
static inline int CFFmpeg_AVERROR_EOF(void) { return AVERROR_EOF; }
/// `AVERROR(EAGAIN)`: send more input, or read output first.
static inline int CFFmpeg_AVERROR_EAGAIN(void) { return AVERROR(EAGAIN); }
/// `AV_NOPTS_VALUE`: no timestamp.
static inline int64_t CFFmpeg_AV_NOPTS_VALUE(void) { return AV_NOPTS_VALUE; }

/// Loads FFmpeg's libraries if they are not yet: NULL, or why they could not be (once tried,
/// the answer stays). Call it before the first FFmpeg function; a call without it that finds
/// the libraries missing aborts.
const char *CFFmpeg_load(void);
