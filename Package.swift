// swift-tools-version: 6.1
import Foundation
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

/// GStreamer's header folders, from pkg-config. CGStreamer is a C target and not a system
/// library, because SwiftPM links every library a system library's pkg-config names, and camd
/// loads GStreamer only when RTSP first starts (CGStreamer/lazy.c; issue 16). RTSP, the one
/// module that imports it, imports it `internal`, so no other module needs these folders.
let gstreamerHeaders: [String] = {
    let process = Process()
    let output = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["pkg-config", "--cflags-only-I", "gstreamer-rtsp-server-1.0", "gstreamer-app-1.0"]
    process.standardOutput = output
    guard (try? process.run()) != nil else { return [] }
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return text.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }.filter { $0.hasPrefix("-I") }
}()

/// camd is linked by the toolchain's lld with packed relative relocations (DT_RELR) where the C
/// library can load them (glibc 2.36, Debian 12): the 2.5 MiB table of relocations gold writes
/// was read, so resident, at every start; packed it is 21 KiB (issue 16: 1.3 MiB less RSS).
let packedRelocations: [LinkerSetting] = {
    #if canImport(Glibc)
    var text = [CChar](repeating: 0, count: 64)  // "glibc 2.36"
    _ = confstr(Int32(_CS_GNU_LIBC_VERSION), &text, text.count)
    let version = String(cString: text).split(separator: " ").last?.split(separator: ".").compactMap { Int($0) } ?? []
    if version.count >= 2, (version[0], version[1]) >= (2, 36) {
        return [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"])]
    }
    #endif
    return []
}()

/// camd's hot functions first (issue 16: memory). The kernel maps a program's code 64 KiB at a
/// time around each page fault, and the few MiB of code camd runs were spread over 23 MiB of
/// text, so nearly every block of it was resident. lld puts the functions listed in
/// Sources/camd/hot-functions.txt (scripts/bench/hot-functions.py writes it) together at the
/// start. That needs one section per function, which release builds get from
/// `-Xswiftc -Xfrontend -Xswiftc -function-sections` (scripts/lib/release-flags.sh); without it, functions
/// move with every other function of their file. A name the binary no longer has is skipped.
let hotFunctionsFirst: [LinkerSetting] = packedRelocations.isEmpty ? [] : [
    .unsafeFlags(["-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/camd/hot-functions.txt",
                  "-Xlinker", "--no-warn-symbol-ordering"], .when(configuration: .release)),
]

/// camd carries the few parts of the C++ runtime it uses (issue 16: memory). The Swift runtime
/// and toml++ (under TOMLKit) are C++: linked to libstdc++.so, camd had the whole library mapped
/// and relocated and ran its start-up (iostreams, locales), 0.85 MiB resident in the vivid VM.
/// From libstdc++.a the functions it calls add about 0.1 MiB to camd's own code. The toolchain's
/// link line asks for `-lstdc++` itself, so this puts a folder first in the search whose
/// libstdc++.so is a linker script naming the archive (Sources/camd/static-cxx). The libcamera
/// shim, dlopened later, brings libstdc++.so with it as before: only C crosses its interface,
/// and camd exports none of its own copy (`noExportedSymbols`).
let staticCxxRuntime: [LinkerSetting] = packedRelocations.isEmpty ? [] : [
    .unsafeFlags(["-L", "\(Context.packageDirectory)/Sources/camd/static-cxx"], .when(configuration: .release)),
]

/// camd exports none of its symbols. The toolchain's link line for `--static-swift-stdlib`
/// passes `-export-dynamic`, which wrote 2.3 MiB of camd's own symbol names and hashes into
/// `.dynsym` and `.dynstr`: the dynamic linker searches the executable first for every symbol
/// a shared library binds, so those tables were read at start (issue 16: about 2 MiB less RSS
/// on the host). Nothing looks camd's symbols up by name: the lazy stubs and the libcamera
/// shim are dlopened with their own handles, and the shim needs nothing from camd.
let noExportedSymbols: [LinkerSetting] = {
    #if canImport(Glibc)
    return [.unsafeFlags(["-Xlinker", "--no-export-dynamic"])]
    #else
    return []
    #endif
}()

let package = Package(
    name: "camd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "camd", targets: ["camd"]),
        .executable(name: "camctl", targets: ["camctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // C shims and system libraries: no logic, only what Swift cannot import.
        .target(name: "CV4L2"),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CLibV4LConvert", pkgConfig: "libv4lconvert",
                       providers: [.apt(["libv4l-dev"])]),
        // FFmpeg's headers (libavcodec-dev, libavformat-dev, libavutil-dev), and stubs that load its
        // libraries on first use instead of linking them (scripts/gen-lazy-stubs; issue 16).
        .target(name: "CFFmpeg", dependencies: ["CLazyLibraries"], exclude: ["lazy.spec"]),
        // GStreamer's RTSP server and appsrc: camd's RTSP for recorders and players (RTSP module).
        // Headers from libgstrtspserver-1.0-dev and libgstreamer-plugins-base1.0-dev, and stubs that
        // load the libraries on first use (scripts/gen-lazy-stubs; see gstreamerHeaders).
        .target(name: "CGStreamer", dependencies: ["CLazyLibraries"], exclude: ["lazy.spec"],
                cSettings: [.unsafeFlags(gstreamerHeaders)]),
        // The loader both families' stubs share: dlopen the libraries, resolve the functions once.
        .target(name: "CLazyLibraries"),
        // libcamera's C interface. The C++ behind it (shim/) is not built by SwiftPM but by
        // scripts/build-libcamera-shim into libcamd-libcamera.so, which camd loads with dlopen:
        // camd then builds and runs without libcamera (see include/CLibCamera.h for why).
        .target(name: "CLibCamera", exclude: ["shim"]),
        // glibc's <malloc.h>: camd pins the allocator's thresholds at start (MemoryPolicy).
        .systemLibrary(name: "CMalloc"),

        // The shared vocabulary: pixel formats, sizes, frames.
        .target(name: "VideoCore", swiftSettings: strict),
        // Device layer: V4L2 devices, discovery, controls, permission checks.
        .target(name: "V4L2", dependencies: [
            "CV4L2", "VideoCore", .product(name: "SystemPackage", package: "swift-system"),
        ], swiftSettings: strict),
        // libcamera cameras (Raspberry Pi camera modules, media-graph sensors) through the shim.
        .target(name: "LibCamera", dependencies: ["CLibCamera", "V4L2", "VideoCore"], swiftSettings: strict),
        // Encoder, validation and image operations.
        // Always optimized: its pixel loops (SIMD in PlaneConversion+SIMD) are hundreds of
        // times slower at -Onone, too slow for the debug builds the VM tests run.
        .target(name: "JPEG", dependencies: ["CTurboJPEG", "CLibV4LConvert", "CV4L2", "VideoCore"],
                swiftSettings: strict + [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // H.264 through FFmpeg: encoders, fragmented MP4, reading videos back for thumbnails.
        // Optimized in debug builds too, as JPEG is: its plane loops run for every frame.
        .target(name: "Video", dependencies: ["CFFmpeg", "JPEG", "VideoCore", .product(name: "SystemPackage", package: "swift-system")],
                swiftSettings: strict + [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // Capture-session actors, frame fan-out, photo output; one-shot snapshots.
        .target(name: "CaptureSession", dependencies: [
            "V4L2", "LibCamera", "JPEG", "Video", "VideoCore",
            .product(name: "SystemPackage", package: "swift-system"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        // The API's messages, shared by the server (ControlAPI) and camctl.
        .target(name: "APIModel", dependencies: ["CaptureSession", "V4L2"], swiftSettings: strict),
        // The HTTP/1.1 control API (server routes).
        .target(name: "ControlAPI", dependencies: [
            "APIModel", "CaptureSession", "V4L2", "LibCamera", "JPEG", "Video", "VideoCore",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
        ], resources: [.embedInCode("Web/www")], swiftSettings: strict),
        // A small blocking client on the Unix socket for camctl, on NIO's HTTP/1.1 codec.
        .target(name: "Client", dependencies: [
            "VideoCore",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ], swiftSettings: strict),
        // RTSP for video recorders and players: GStreamer's RTSP server fed with the cameras' H.264.
        .target(name: "RTSP", dependencies: [
            "CGStreamer", "CaptureSession", "Video",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict + [.unsafeFlags(gstreamerHeaders.flatMap { ["-Xcc", $0] })]),
        // The daemon's wiring that tests reach: configuration, systemd, services.
        .target(name: "Daemon", dependencies: [
            "CaptureSession", "ControlAPI", "RTSP", "V4L2", "JPEG", "CV4L2", "CMalloc",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "TOMLKit", package: "TOMLKit"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ], swiftSettings: strict),

        .executableTarget(name: "camctl", dependencies: [
            "APIModel", "CaptureSession", "Client", "V4L2", "LibCamera", "JPEG", "Video", "VideoCore",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: strict),
        // Benchmarks that print figures (see README, Performance).
        .executableTarget(name: "camd-bench", dependencies: ["JPEG", "Video", "VideoCore", "CaptureSession"], swiftSettings: strict),
        .executableTarget(name: "camd", dependencies: [
            "CaptureSession", "Daemon",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], exclude: ["hot-functions.txt", "static-cxx"], swiftSettings: strict,
        linkerSettings: packedRelocations + noExportedSymbols + hotFunctionsFirst + staticCxxRuntime),

        .testTarget(name: "VideoCoreTests", dependencies: ["VideoCore"], swiftSettings: strict),
        .testTarget(name: "V4L2Tests", dependencies: ["V4L2", "CV4L2"], swiftSettings: strict),
        .testTarget(name: "LibCameraTests", dependencies: ["LibCamera", "V4L2", "VideoCore"], swiftSettings: strict),
        .testTarget(name: "VideoTests", dependencies: ["Video", "JPEG", "VideoCore", "CamdTestSupport"], swiftSettings: strict),
        .testTarget(name: "JPEGTests", dependencies: ["JPEG", "CTurboJPEG", "CamdTestSupport"], swiftSettings: strict),
        // What several test targets share: reading camd's EXIF back.
        .target(name: "CamdTestSupport", dependencies: ["JPEG"], path: "Tests/CamdTestSupport", swiftSettings: strict),
        .testTarget(name: "CaptureSessionTests", dependencies: ["CaptureSession", "CamdTestSupport", "V4L2", "Video"], swiftSettings: strict),
        .testTarget(name: "ControlAPITests", dependencies: [
            "ControlAPI", "CaptureSession", "JPEG", "Video", "VideoCore", "CamdTestSupport", "APIModel", "Client",
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ], swiftSettings: strict),
        .testTarget(name: "ClientTests", dependencies: ["Client"], swiftSettings: strict),
        .testTarget(name: "DaemonTests", dependencies: [
            "Daemon", "APIModel", "CaptureSession", "V4L2", "ControlAPI", "Client", "JPEG", "Video", "VideoCore", "CamdTestSupport",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
        ], swiftSettings: strict),
        // `@testable import RTSP` sees its internal import of CGStreamer, so GStreamer's headers too.
        .testTarget(name: "RTSPTests", dependencies: [
            "RTSP", "CaptureSession", "CamdTestSupport", "VideoCore",
        ], swiftSettings: strict + [.unsafeFlags(gstreamerHeaders.flatMap { ["-Xcc", $0] })]),
        // Runs only inside the vivid VM (CAMD_TEST_VIVID=1); see scripts/test-vivid.
        .testTarget(name: "VividTests", dependencies: ["CaptureSession", "ControlAPI", "V4L2", "JPEG", "Video", "CamdTestSupport", "APIModel", "Client",
                                                 .product(name: "HummingbirdTesting", package: "hummingbird")],
                    swiftSettings: strict),
    ]
)
