// swift-tools-version: 6.1
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "camd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "camd", targets: ["camd"]),
        .executable(name: "camctl", targets: ["camctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // C shims and system libraries: no logic, only what Swift cannot import.
        .target(name: "CV4L2"),
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CLibV4LConvert", pkgConfig: "libv4lconvert",
                       providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),

        // The shared vocabulary: pixel formats, sizes, frames.
        .target(name: "VideoCore", swiftSettings: strict),
        // Device layer: V4L2 devices, discovery, controls, permission checks.
        .target(name: "V4L2", dependencies: [
            "CV4L2", "VideoCore", .product(name: "SystemPackage", package: "swift-system"),
        ], swiftSettings: strict),
        // Encoder, validation and image operations.
        .target(name: "JPEG", dependencies: ["CTurboJPEG", "CLibV4LConvert", "CV4L2", "VideoCore"],
                swiftSettings: strict),
        // Sources, one-shot capture, photo files.
        .target(name: "CaptureSession", dependencies: [
            "V4L2", "JPEG", "VideoCore", .product(name: "SystemPackage", package: "swift-system"),
        ],
                swiftSettings: strict),

        .executableTarget(name: "camctl", dependencies: [
            "CaptureSession", "V4L2", "JPEG", "VideoCore",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: strict),
        .executableTarget(name: "camd", dependencies: [
            "CaptureSession", "V4L2", "JPEG", "VideoCore",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: strict),

        .testTarget(name: "VideoCoreTests", dependencies: ["VideoCore"], swiftSettings: strict),
        .testTarget(name: "V4L2Tests", dependencies: ["V4L2", "CV4L2"], swiftSettings: strict),
        .testTarget(name: "JPEGTests", dependencies: ["JPEG", "CTurboJPEG"], swiftSettings: strict),
        .testTarget(name: "CaptureSessionTests", dependencies: ["CaptureSession"], swiftSettings: strict),
        // Runs only inside the vivid VM (CAMD_TEST_VIVID=1); see scripts/test-vivid.
        .testTarget(name: "VividTests", dependencies: ["CaptureSession", "V4L2", "JPEG"],
                    swiftSettings: strict),
    ]
)
