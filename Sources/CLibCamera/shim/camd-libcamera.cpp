// camd's libcamera shim: libcamera's C++ API behind the C interface of
// ../include/CLibCamera.h, built into libcamd-libcamera.so by scripts/build-libcamera-shim.
// It translates calls and values and keeps the objects libcamera needs alive; every
// decision (which camera, which format, what a failure means) is made in Swift.
//
// Built and checked against libcamera 0.0.3 (Debian 12) and 0.7.1 (Raspberry Pi's, built
// from source; scripts/test-libcamera with PKG_CONFIG_PATH). Where they differ, the
// differences are marked with LIBCAMERA_VERSION_* checks (ControlType's numbering) or
// written to build with both (properties::Model; generateConfiguration takes a braced
// list as the 0.0.x vector and the later Span).
#include <CLibCamera.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <sys/mman.h>

#include <libcamera/libcamera.h>
#include <libcamera/version.h>

using namespace libcamera;

struct clibcamera_manager {
    CameraManager manager;
};

namespace {

void copyString(char *to, size_t capacity, const std::string &from) {
    size_t n = std::min(capacity - 1, from.size());
    std::memcpy(to, from.data(), n);
    to[n] = 0;
}

// A plane's pixels as mapped into this process.
struct PlaneView {
    const uint8_t *data;
    uint32_t length;
};

// Unsigned16 and Unsigned32 came in libcamera 0.4, before Integer32 in ControlType's numbering.
#define CLIBCAMERA_HAS_UNSIGNED (LIBCAMERA_VERSION_MAJOR > 0 || LIBCAMERA_VERSION_MINOR >= 4)

// camd's number for a control type (CLibCamera.h), whatever libcamera's numbering.
int controlType(ControlType type) {
    switch (type) {
    case ControlTypeNone: return CLIBCAMERA_CONTROL_NONE;
    case ControlTypeBool: return CLIBCAMERA_CONTROL_BOOL;
    case ControlTypeByte: return CLIBCAMERA_CONTROL_BYTE;
#if CLIBCAMERA_HAS_UNSIGNED
    case ControlTypeUnsigned16: return CLIBCAMERA_CONTROL_UINT16;
    case ControlTypeUnsigned32: return CLIBCAMERA_CONTROL_UINT32;
#endif
    case ControlTypeInteger32: return CLIBCAMERA_CONTROL_INT32;
    case ControlTypeInteger64: return CLIBCAMERA_CONTROL_INT64;
    case ControlTypeFloat: return CLIBCAMERA_CONTROL_FLOAT;
    case ControlTypeString: return CLIBCAMERA_CONTROL_STRING;
    case ControlTypeRectangle: return CLIBCAMERA_CONTROL_RECTANGLE;
    case ControlTypeSize: return CLIBCAMERA_CONTROL_SIZE;
    default: return CLIBCAMERA_CONTROL_OTHER;
    }
}

// One control value of a C array as the control's own type; false for types camd does not set.
bool toControlValue(const ControlId *id, double value, ControlValue &out) {
    switch (id->type()) {
    case ControlTypeBool: out = ControlValue(value != 0); return true;
    case ControlTypeByte: out = ControlValue(static_cast<uint8_t>(value)); return true;
#if CLIBCAMERA_HAS_UNSIGNED
    case ControlTypeUnsigned16: out = ControlValue(static_cast<uint16_t>(value)); return true;
    case ControlTypeUnsigned32: out = ControlValue(static_cast<uint32_t>(value)); return true;
#endif
    case ControlTypeInteger32: out = ControlValue(static_cast<int32_t>(value)); return true;
    case ControlTypeInteger64: out = ControlValue(static_cast<int64_t>(value)); return true;
    case ControlTypeFloat: out = ControlValue(static_cast<float>(value)); return true;
    default: return false;
    }
}

bool toDouble(const ControlValue &value, double &out) {
    if (value.isArray()) return false;
    switch (value.type()) {
    case ControlTypeBool: out = value.get<bool>() ? 1 : 0; return true;
    case ControlTypeByte: out = value.get<uint8_t>(); return true;
#if CLIBCAMERA_HAS_UNSIGNED
    case ControlTypeUnsigned16: out = value.get<uint16_t>(); return true;
    case ControlTypeUnsigned32: out = value.get<uint32_t>(); return true;
#endif
    case ControlTypeInteger32: out = value.get<int32_t>(); return true;
    case ControlTypeInteger64: out = static_cast<double>(value.get<int64_t>()); return true;
    case ControlTypeFloat: out = value.get<float>(); return true;
    default: return false;
    }
}

}  // namespace

struct clibcamera_camera {
    std::shared_ptr<Camera> camera;
    std::unique_ptr<CameraConfiguration> config;
    std::unique_ptr<FrameBufferAllocator> allocator;
    std::vector<std::unique_ptr<Request>> requests;   // index == cookie
    std::vector<std::vector<PlaneView>> planes;       // per request
    std::vector<std::pair<void *, size_t>> mappings;
    Stream *stream = nullptr;
    bool running = false;
    clibcamera_frame_callback onFrame = nullptr;
    clibcamera_disconnect_callback onDisconnect = nullptr;
    void *context = nullptr;

    int setControls(ControlList &list, const clibcamera_control_value *values, int count) {
        const ControlInfoMap &info = camera->controls();
        for (int i = 0; i < count; i++) {
            auto found = info.idmap().find(values[i].id);
            if (found == info.idmap().end()) return -ENOENT;
            ControlValue value;
            if (!toControlValue(found->second, values[i].value, value)) return -EINVAL;
            list.set(values[i].id, value);
        }
        return 0;
    }

    void completed(Request *request) {
        if (!onFrame) return;
        clibcamera_frame frame {};
        frame.cookie = request->cookie();
        frame.cancelled = request->status() == Request::RequestCancelled;
        FrameBuffer *buffer = request->findBuffer(stream);
        if (buffer) {
            const FrameMetadata &metadata = buffer->metadata();
            frame.frame_status = metadata.status;
            frame.sequence = metadata.sequence;
            frame.timestamp_ns = metadata.timestamp;
            const auto &views = planes[request->cookie()];
            auto used = metadata.planes();
            frame.plane_count = std::min<uint32_t>(views.size(), CLIBCAMERA_MAX_PLANES);
            for (uint32_t p = 0; p < frame.plane_count; p++) {
                frame.planes[p].data = views[p].data;
                frame.planes[p].length = views[p].length;
                frame.planes[p].bytes_used = p < used.size() ? used[p].bytesused : 0;
            }
        } else {
            frame.frame_status = FrameMetadata::FrameError;
        }
        onFrame(context, &frame);
    }

    void disconnected() {
        if (onDisconnect) onDisconnect(context);
    }

    void freeBuffers() {
        requests.clear();
        planes.clear();
        for (auto &m : mappings) munmap(m.first, m.second);
        mappings.clear();
        allocator.reset();
        stream = nullptr;
    }

    // Maps every plane; planes that share a dmabuf (one buffer, several planes) share a mapping.
    int mapBuffer(const FrameBuffer &buffer, std::vector<PlaneView> &views) {
        std::map<int, size_t> extent;
        for (const auto &plane : buffer.planes()) {
            size_t end = size_t(plane.offset) + plane.length;
            extent[plane.fd.get()] = std::max(extent[plane.fd.get()], end);
        }
        std::map<int, uint8_t *> base;
        for (auto [fd, length] : extent) {
            void *address = mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
            if (address == MAP_FAILED) return -errno;
            mappings.emplace_back(address, length);
            base[fd] = static_cast<uint8_t *>(address);
        }
        for (const auto &plane : buffer.planes())
            views.push_back({ base[plane.fd.get()] + plane.offset, plane.length });
        return 0;
    }
};

extern "C" {

static const char *shimVersion() {
    static std::string version = CameraManager::version();
    return version.c_str();
}

static int managerStart(clibcamera_manager **out) {
    auto manager = std::make_unique<clibcamera_manager>();
    int ret = manager->manager.start();
    if (ret < 0) return ret;
    *out = manager.release();
    return 0;
}

static void managerStop(clibcamera_manager *manager) {
    if (!manager) return;
    manager->manager.stop();
    delete manager;
}

static int listCameras(clibcamera_manager *manager, clibcamera_camera_info *out, int capacity) {
    auto list = manager->manager.cameras();
    for (int i = 0; i < capacity && i < int(list.size()); i++) {
        copyString(out[i].id, sizeof(out[i].id), list[i]->id());
        auto model = list[i]->properties().get(properties::Model);
        // properties::Model is a std::string before libcamera 0.6 and a std::string_view since.
        copyString(out[i].model, sizeof(out[i].model), model ? std::string(*model) : std::string());
    }
    return int(list.size());
}

static int acquire(clibcamera_manager *manager, const char *id, clibcamera_camera **out) {
    std::shared_ptr<Camera> camera = manager->manager.get(id);
    if (!camera) return -ENODEV;
    int ret = camera->acquire();
    if (ret < 0) return ret;
    auto result = new clibcamera_camera;
    result->camera = std::move(camera);
    *out = result;
    return 0;
}

static int stop(clibcamera_camera *camera) {
    if (!camera->running) return 0;
    int ret = camera->camera->stop();  // completes the queued requests as cancelled first
    camera->camera->requestCompleted.disconnect(camera);
    camera->camera->disconnected.disconnect(camera);
    camera->running = false;
    camera->onFrame = nullptr;
    camera->onDisconnect = nullptr;
    return ret;
}

static void release(clibcamera_camera *camera) {
    if (!camera) return;
    stop(camera);
    camera->freeBuffers();
    camera->config.reset();
    camera->camera->release();
    delete camera;
}

static int listFormats(clibcamera_camera *camera, clibcamera_format *out, int capacity) {
    auto config = camera->camera->generateConfiguration({ StreamRole::VideoRecording });
    if (!config || config->empty()) return -EINVAL;
    const StreamFormats &offered = config->at(0).formats();
    auto pixelFormats = offered.pixelformats();
    for (int i = 0; i < capacity && i < int(pixelFormats.size()); i++) {
        const PixelFormat &format = pixelFormats[i];
        clibcamera_format &f = out[i];
        std::memset(&f, 0, sizeof(f));
        f.fourcc = format.fourcc();
        f.modifier = format.modifier();
        copyString(f.name, sizeof(f.name), format.toString());
        SizeRange range = offered.range(format);
        f.min_width = range.min.width, f.min_height = range.min.height;
        f.max_width = range.max.width, f.max_height = range.max.height;
        f.h_step = range.hStep, f.v_step = range.vStep;
        auto sizes = offered.sizes(format);
        f.size_count = std::min<uint32_t>(sizes.size(), CLIBCAMERA_MAX_SIZES);
        for (uint32_t s = 0; s < f.size_count; s++) {
            f.sizes[s][0] = sizes[s].width;
            f.sizes[s][1] = sizes[s].height;
        }
    }
    return int(pixelFormats.size());
}

static int listControls(clibcamera_camera *camera, clibcamera_control_info *out, int capacity) {
    const ControlInfoMap &info = camera->camera->controls();
    int count = 0;
    for (const auto &[id, range] : info) {
        if (count < capacity) {
            clibcamera_control_info &c = out[count];
            std::memset(&c, 0, sizeof(c));
            c.id = id->id();
            copyString(c.name, sizeof(c.name), id->name());
            c.type = controlType(id->type());
            c.scalar = toDouble(range.min(), c.min) && toDouble(range.max(), c.max);
            if (c.scalar && !toDouble(range.def(), c.def)) c.def = c.min;
        }
        count++;
    }
    return count;
}

static int configure(clibcamera_camera *camera, clibcamera_stream_config *wanted) {
    if (camera->running) return -EBUSY;
    camera->freeBuffers();
    auto config = camera->camera->generateConfiguration({ StreamRole::VideoRecording });
    if (!config || config->empty()) return -EINVAL;
    StreamConfiguration &stream = config->at(0);
    if (wanted->fourcc) stream.pixelFormat = PixelFormat(wanted->fourcc);
    if (wanted->width && wanted->height) stream.size = Size(wanted->width, wanted->height);
    if (wanted->buffer_count) stream.bufferCount = wanted->buffer_count;
    CameraConfiguration::Status status = config->validate();
    if (status == CameraConfiguration::Invalid) return -EINVAL;
    int ret = camera->camera->configure(config.get());
    if (ret < 0) return ret;

    camera->config = std::move(config);
    StreamConfiguration &applied = camera->config->at(0);
    camera->stream = applied.stream();
    camera->allocator = std::make_unique<FrameBufferAllocator>(camera->camera);
    ret = camera->allocator->allocate(camera->stream);
    if (ret < 0) {
        camera->freeBuffers();
        return ret;
    }
    const auto &buffers = camera->allocator->buffers(camera->stream);
    for (size_t i = 0; i < buffers.size(); i++) {
        std::unique_ptr<Request> request = camera->camera->createRequest(i);
        if (!request) {
            camera->freeBuffers();
            return -ENOMEM;
        }
        ret = request->addBuffer(camera->stream, buffers[i].get());
        std::vector<PlaneView> views;
        if (ret == 0) ret = camera->mapBuffer(*buffers[i], views);
        if (ret < 0) {
            camera->freeBuffers();
            return ret;
        }
        camera->requests.push_back(std::move(request));
        camera->planes.push_back(std::move(views));
    }
    wanted->fourcc = applied.pixelFormat.fourcc();
    wanted->width = applied.size.width;
    wanted->height = applied.size.height;
    wanted->buffer_count = uint32_t(buffers.size());
    wanted->stride = applied.stride;
    wanted->frame_size = applied.frameSize;
    wanted->adjusted = status == CameraConfiguration::Adjusted;
    wanted->range = !applied.colorSpace ? 0 : applied.colorSpace->range == ColorSpace::Range::Full ? 1 : 2;
    return 0;
}

static int start(clibcamera_camera *camera, const clibcamera_control_value *values, int count,
                 clibcamera_frame_callback onFrame, clibcamera_disconnect_callback onDisconnect, void *context) {
    if (camera->running) return -EBUSY;
    if (camera->requests.empty()) return -EINVAL;
    ControlList initial(camera->camera->controls());
    int ret = camera->setControls(initial, values, count);
    if (ret < 0) return ret;
    camera->onFrame = onFrame;
    camera->onDisconnect = onDisconnect;
    camera->context = context;
    camera->camera->requestCompleted.connect(camera, &clibcamera_camera::completed);
    camera->camera->disconnected.connect(camera, &clibcamera_camera::disconnected);
    ret = camera->camera->start(&initial);
    if (ret < 0) {
        camera->camera->requestCompleted.disconnect(camera);
        camera->camera->disconnected.disconnect(camera);
        return ret;
    }
    camera->running = true;
    for (auto &request : camera->requests) {
        ret = camera->camera->queueRequest(request.get());
        if (ret < 0) {
            stop(camera);
            return ret;
        }
    }
    return 0;
}

static int requeue(clibcamera_camera *camera, uint64_t cookie, const clibcamera_control_value *values, int count) {
    if (!camera->running) return -ESHUTDOWN;
    if (cookie >= camera->requests.size()) return -EINVAL;
    Request *request = camera->requests[cookie].get();
    request->reuse(Request::ReuseBuffers);
    int ret = camera->setControls(request->controls(), values, count);
    if (ret < 0) return ret;
    return camera->camera->queueRequest(request);
}

static const clibcamera_api api = {
    CLIBCAMERA_ABI_VERSION,
    shimVersion,
    managerStart,
    managerStop,
    listCameras,
    acquire,
    release,
    listFormats,
    listControls,
    configure,
    start,
    requeue,
    stop,
};

__attribute__((visibility("default"))) const clibcamera_api *clibcamera_api_v1(void) {
    return &api;
}

}  // extern "C"
