// The C interface of camd's libcamera shim (shim/camd-libcamera.cpp, built by
// scripts/build-libcamera-shim into libcamd-libcamera.so and loaded with dlopen).
// Only what the shim passes across: plain structs, numbers, C strings. No logic:
// camd's Swift module LibCamera decides everything.
//
// Why a dlopen'ed library and not a SwiftPM target: libcamera is C++ with no stable
// ABI (Debian 12's is libcamera.so.0.0.3; Raspberry Pi OS's differs), and camd must
// build and run where it is not installed. A SwiftPM C++ target would link libcamera
// into camd itself whenever it was found at build time, so a binary built with it
// would not start without it, and SwiftPM cannot make a target's sources or
// link flags depend on `pkg-config libcamera`. Loading one small library at run
// time keeps camd's build free of libcamera, lets a machine build only the shim
// against the libcamera it has, and turns "not installed" into a message.
#ifndef CLIBCAMERA_H
#define CLIBCAMERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Bumped whenever a struct or function below changes; camd refuses a shim of another version.
#define CLIBCAMERA_ABI_VERSION 1
/// The one symbol camd looks up: `const clibcamera_api *clibcamera_api_v1(void)`.
#define CLIBCAMERA_ENTRY "clibcamera_api_v1"
#define CLIBCAMERA_MAX_PLANES 4
#define CLIBCAMERA_MAX_SIZES 32

typedef struct clibcamera_manager clibcamera_manager;  // libcamera::CameraManager, started
typedef struct clibcamera_camera clibcamera_camera;    // an acquired libcamera::Camera

typedef struct {
    char id[256];      // Camera::id(): "platform/vimc.0 Sensor B"
    char model[128];   // properties::Model, or "" when the camera has none
} clibcamera_camera_info;

/// One pixel format of the stream configuration (StreamFormats of the VideoRecording role).
typedef struct {
    uint32_t fourcc;       // DRM fourcc (libcamera's PixelFormat::fourcc())
    uint64_t modifier;
    char name[32];         // PixelFormat::toString(): "RGB888"
    uint32_t min_width, min_height, max_width, max_height;  // StreamFormats::range()
    uint32_t h_step, v_step;
    uint32_t size_count;   // StreamFormats::sizes(), at most CLIBCAMERA_MAX_SIZES of them
    uint32_t sizes[CLIBCAMERA_MAX_SIZES][2];
} clibcamera_format;

/// In: fourcc (0: the camera's default), width and height (0: default), buffer_count (0: default).
/// Out: what libcamera adjusted them to, and the stream's layout.
typedef struct {
    uint32_t fourcc;
    uint32_t width, height;
    uint32_t buffer_count;
    uint32_t stride;       // bytes per line of the first plane
    uint32_t frame_size;   // bytes of all planes
    int adjusted;          // 1 when CameraConfiguration::validate() said Adjusted
    int range;             // the colour space's range: 1 full, 2 limited, 0 not given
} clibcamera_stream_config;

/// One plane of a frame buffer, mapped read-only into the process.
typedef struct {
    const uint8_t *data;
    uint32_t length;      // mapped length
    uint32_t bytes_used;  // FrameMetadata::Plane::bytesused
} clibcamera_plane;

/// A completed request, handed to the frame callback on libcamera's thread. The planes
/// stay mapped and untouched until the request is requeued (`requeue`).
typedef struct {
    uint64_t cookie;       // the request, for requeue
    int cancelled;         // Request::RequestCancelled (stopping, or the camera went away)
    int frame_status;      // FrameMetadata::Status: 0 success, 1 error, 2 cancelled
    uint32_t sequence;
    uint64_t timestamp_ns; // FrameMetadata::timestamp (CLOCK_MONOTONIC)
    uint32_t plane_count;
    clibcamera_plane planes[CLIBCAMERA_MAX_PLANES];
} clibcamera_frame;

/// A control's type. The shim maps libcamera's ControlType to these: libcamera's own
/// numbers changed in 0.4 (Unsigned16 and Unsigned32 were put before Integer32).
enum {
    CLIBCAMERA_CONTROL_NONE = 0, CLIBCAMERA_CONTROL_BOOL = 1, CLIBCAMERA_CONTROL_BYTE = 2,
    CLIBCAMERA_CONTROL_INT32 = 3, CLIBCAMERA_CONTROL_INT64 = 4, CLIBCAMERA_CONTROL_FLOAT = 5,
    CLIBCAMERA_CONTROL_STRING = 6, CLIBCAMERA_CONTROL_RECTANGLE = 7, CLIBCAMERA_CONTROL_SIZE = 8,
    CLIBCAMERA_CONTROL_UINT16 = 9, CLIBCAMERA_CONTROL_UINT32 = 10, CLIBCAMERA_CONTROL_OTHER = 11,
};

/// One control of Camera::controls(). min/max/def are meaningful when `scalar` is 1
/// (a single Bool, Byte, Int32, Int64 or Float); others are listed by name only.
typedef struct {
    uint32_t id;
    char name[64];         // ControlId::name(): "Brightness"
    int type;              // CLIBCAMERA_CONTROL_*
    int scalar;
    double min, max, def;
} clibcamera_control_info;

/// A control to set, by id; the shim converts the number to the control's type.
typedef struct {
    uint32_t id;
    double value;
} clibcamera_control_value;

typedef void (*clibcamera_frame_callback)(void *context, const clibcamera_frame *frame);
typedef void (*clibcamera_disconnect_callback)(void *context);

/// Every function returns 0 or a count on success and a negative errno on failure.
typedef struct {
    uint32_t abi_version;  // CLIBCAMERA_ABI_VERSION
    /// libcamera's own version string (CameraManager::version()).
    const char *(*version)(void);

    /// Creates and starts the process's CameraManager.
    int (*manager_start)(clibcamera_manager **out);
    void (*manager_stop)(clibcamera_manager *manager);
    /// Fills up to `capacity` cameras; returns how many there are.
    int (*cameras)(clibcamera_manager *manager, clibcamera_camera_info *out, int capacity);

    /// Camera::acquire() of the camera with this id (-ENODEV: none; -EBUSY: in use).
    int (*acquire)(clibcamera_manager *manager, const char *id, clibcamera_camera **out);
    /// Stops it if running, frees its buffers, releases it.
    void (*release)(clibcamera_camera *camera);

    /// Fills up to `capacity` formats of the VideoRecording role; returns how many there are.
    int (*formats)(clibcamera_camera *camera, clibcamera_format *out, int capacity);
    /// Fills up to `capacity` controls; returns how many there are.
    int (*controls)(clibcamera_camera *camera, clibcamera_control_info *out, int capacity);

    /// Validates and applies one stream configuration, allocates and maps its buffers
    /// and makes one request per buffer.
    int (*configure)(clibcamera_camera *camera, clibcamera_stream_config *config);
    /// Starts with `controls` and queues every request; `on_frame` and `on_disconnect`
    /// are called on libcamera's thread with `context`.
    int (*start)(clibcamera_camera *camera, const clibcamera_control_value *controls, int count,
                 clibcamera_frame_callback on_frame, clibcamera_disconnect_callback on_disconnect, void *context);
    /// Queues a completed request again, with `controls` set on it.
    int (*requeue)(clibcamera_camera *camera, uint64_t cookie, const clibcamera_control_value *controls, int count);
    /// Camera::stop(): every queued request completes as cancelled before it returns.
    int (*stop)(clibcamera_camera *camera);
} clibcamera_api;

typedef const clibcamera_api *(*clibcamera_entry)(void);

#ifdef __cplusplus
}
#endif
#endif
