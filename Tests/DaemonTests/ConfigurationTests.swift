import CaptureSession
@testable import Daemon
import Foundation
import Testing
import VideoCore

@Suite struct ConfigurationParsingTests {
    static let fullFile = """
        # camd test configuration
        [daemon]
        socket = "/run/camd-test.sock"
        socket_mode = "0640"
        socket_group = "camera"
        read_only_group = "camviewers"
        photo_folder = "/srv/photos"
        log_level = "debug"
        tcp = "0.0.0.0:8080"
        tcp_token = "s3cret-token"
        shutdown_timeout = "1m"
        idle_timeout = "2m"

        [[camera]]
        id = "bench"
        device = "/dev/v4l/by-id/usb-Foo-video-index0"
        format = "MJPEG"
        size = "1280x720"
        fps = 29.97
        quality = 90
        autostart = false
        idle_stop = "2m"
        encoder_threads = 3
        encode_every_frame = true
          [camera.controls]
          brightness = 140
          power_line_frequency = "50 Hz"
          exposure_dynamic_framerate = false
          [camera.photos]
          interval = "10m"
          name = "{camera}-{date}-{time}-{ms}-{seq}.jpg"
          keep_count = 1000
          keep_bytes = "2G"
          keep_age = "7d"

        [[camera]]
        id = "door_2"
        format = "YUYV"
        fps = 15
        idle_stop = 0
        photos.interval = 90
        photos.keep_bytes = 500000
        """

    @Test func aFullFileGivesEveryValue() throws {
        let configuration = try DaemonConfiguration.parse(Self.fullFile, source: "full.toml")
        #expect(configuration.socketPath == "/run/camd-test.sock")
        #expect(configuration.socketMode == 0o640)
        #expect(configuration.socketGroup == "camera")
        #expect(configuration.readOnlyGroup == "camviewers")
        #expect(configuration.photoRoot == "/srv/photos")
        #expect(configuration.logLevel == "debug")
        #expect(configuration.tcpListen == "0.0.0.0:8080")
        #expect(configuration.tcpToken == "s3cret-token")
        #expect(configuration.shutdownTimeoutSeconds == 60)
        #expect(configuration.idleTimeoutSeconds == 120)

        let bench = CameraSettings(
            id: "bench", device: "/dev/v4l/by-id/usb-Foo-video-index0", format: .mjpeg,
            size: FrameSize(width: 1280, height: 720), fps: 29.97, quality: 90,
            controls: ["brightness": "140", "power_line_frequency": "50 Hz", "exposure_dynamic_framerate": "false"],
            autostart: false, idleStopSeconds: 120,
            photos: PhotoSettings(intervalSeconds: 600, namePattern: PhotoSettings.defaultPattern, keepCount: 1000,
                                  keepBytes: 2 * 1024 * 1024 * 1024, keepSeconds: 7 * 86400),
            encoderThreads: 3, encodeEveryFrame: true)
        let door = CameraSettings(id: "door_2", format: .yuyv, fps: 15, idleStopSeconds: 0,
                                  photos: PhotoSettings(intervalSeconds: 90, keepBytes: 500_000))
        #expect(configuration.cameras == [bench, door])
    }

    @Test func anEmptyFileGivesTheDefaults() throws {
        let defaults = DaemonConfiguration()
        #expect(try DaemonConfiguration.parse("", source: "empty.toml") == defaults)
        #expect(try DaemonConfiguration.parse("# nothing here\n\n[daemon]\n", source: "comments.toml") == defaults)
        #expect(defaults.socketPath == nil)
        #expect(defaults.socketMode == 0o660)
        #expect(defaults.socketGroup == "video")
        #expect(defaults.readOnlyGroup == nil)
        #expect(defaults.photoRoot == nil)
        #expect(defaults.logLevel == "info")
        #expect(defaults.tcpListen == nil)
        #expect(defaults.tcpToken == nil)
        #expect(defaults.shutdownTimeoutSeconds == 5)
        #expect(defaults.idleTimeoutSeconds == 30)
        #expect(defaults.cameras.isEmpty)
    }

    @Test func aCameraWithOnlyAnIDGetsCameraSettingsDefaults() throws {
        let configuration = try DaemonConfiguration.parse("[[camera]]\nid = \"a\"\n", source: "a.toml")
        #expect(configuration.cameras == [CameraSettings(id: "a")])
    }

    @Test func emptyStringsTurnOptionalSettingsOff() throws {
        let text = """
            [daemon]
            socket_group = ""
            tcp = ""
            """
        let configuration = try DaemonConfiguration.parse(text, source: "off.toml")
        #expect(configuration.socketGroup == nil)
        #expect(configuration.tcpListen == nil)
    }

    @Test func loopbackTCPNeedsNoToken() throws {
        for listen in ["127.0.0.1:8080", "localhost:9000", "[::1]:8080"] {
            let configuration = try DaemonConfiguration.parse("[daemon]\ntcp = \"\(listen)\"\n", source: "tcp.toml")
            #expect(configuration.tcpListen == listen)
            #expect(configuration.tcpToken == nil)
        }
    }

    @Test func tcpHostsNameTheHostsTheListenerAnswersTo() throws {
        let configuration = try DaemonConfiguration.parse("[daemon]\ntcp = \"127.0.0.1:8080\"\ntcp_hosts = [\"camera.lan\", \"cams-1.example.org\"]\n",
                                                          source: "hosts.toml")
        #expect(configuration.tcpHosts == ["camera.lan", "cams-1.example.org"])
        for bad in [#"tcp_hosts = "camera.lan""#, #"tcp_hosts = ["http://camera.lan"]"#, #"tcp_hosts = ["camera.lan:8080"]"#,
                    #"tcp_hosts = [""]"#, #"tcp_hosts = [1]"#] {
            do {
                _ = try DaemonConfiguration.parse("[daemon]\n\(bad)\n", source: "hosts.toml")
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(error.keyPath == "daemon.tcp_hosts", "\(bad): \(error)")
                #expect(error.line == 2, "\(bad): \(error)")
            }
        }
    }

    @Test func logLevelsIgnoreCase() throws {
        #expect(try DaemonConfiguration.parse("[daemon]\nlog_level = \"WARNING\"\n", source: "l.toml").logLevel == "warning")
    }

    @Test func camerasMayBeAnInlineArray() throws {
        let text = #"camera = [{ id = "a", fps = 5 }, { id = "b" }]"#
        let configuration = try DaemonConfiguration.parse(text, source: "inline.toml")
        #expect(configuration.cameras.map(\.id) == ["a", "b"])
        #expect(configuration.cameras.first?.fps == 5)
    }
}

/// One broken file and where the error must point.
struct BrokenFile: CustomTestStringConvertible, Sendable {
    var name: String
    var text: String
    var kind: ConfigurationError.Kind
    var keyPath: String?
    var line: Int?
    var says: [String]

    var testDescription: String { name }
}

@Suite struct ConfigurationErrorTests {
    static let cases: [BrokenFile] = [
        BrokenFile(name: "TOML syntax", text: "[daemon]\nsocket = \"/run/a.sock\"\nlog_level = \n", kind: .syntax,
                   keyPath: nil, line: 3, says: ["not valid TOML"]),
        BrokenFile(name: "unquoted octal socket_mode", text: "[daemon]\nsocket_mode = 0660\n", kind: .syntax,
                   keyPath: nil, line: 2, says: ["socket_mode = \"0660\""]),
        BrokenFile(name: "typo in a camera key", text: "[[camera]]\nid = \"a\"\nfsp = 30\n", kind: .unknownKey,
                   keyPath: "camera[0].fsp", line: 3, says: ["camera[0].fsp is not a known key; did you mean fps?"]),
        BrokenFile(name: "typo in a table name", text: "\n[deamon]\nsocket = \"/a\"\n", kind: .unknownKey,
                   keyPath: "deamon", line: 2, says: ["deamon is not a known table; did you mean daemon?"]),
        BrokenFile(name: "typo in [daemon]", text: "[daemon]\nsocket_grop = \"video\"\n", kind: .unknownKey,
                   keyPath: "daemon.socket_grop", line: 2, says: ["did you mean socket_group?"]),
        BrokenFile(name: "photo key in the camera table", text: "[[camera]]\nid = \"a\"\ninterval = \"10m\"\n", kind: .unknownKey,
                   keyPath: "camera[0].interval", line: 3, says: ["it belongs under [camera.photos]"]),
        BrokenFile(name: "typo in photos", text: "[[camera]]\nid = \"a\"\n[camera.photos]\nkeep_cont = 3\n", kind: .unknownKey,
                   keyPath: "camera[0].photos.keep_cont", line: 4, says: ["did you mean keep_count?"]),
        BrokenFile(name: "unknown key far from any known one", text: "[[camera]]\nid = \"a\"\nfoo = 1\n", kind: .unknownKey,
                   keyPath: "camera[0].foo", line: 3, says: ["known keys here are id, device, format"]),
        BrokenFile(name: "unknown key at the top", text: "\nfoo = 1\n", kind: .unknownKey,
                   keyPath: "foo", line: 2, says: ["only a [daemon] table and [[camera]] tables"]),
        BrokenFile(name: "daemon key at the top", text: "socket = \"/run/a.sock\"\n", kind: .unknownKey,
                   keyPath: "socket", line: 1, says: ["it belongs under [daemon]"]),
        BrokenFile(name: "fps of the wrong type", text: "[[camera]]\nid = \"a\"\n\n[[camera]]\nid = \"b\"\nfps = \"fast\"\n",
                   kind: .wrongType, keyPath: "camera[1].fps", line: 6,
                   says: [#"camera[1].fps must be a number above 0 and at most 1000; got "fast""#]),
        BrokenFile(name: "fps too high", text: "[[camera]]\nid = \"a\"\nfps = 5000\n", kind: .invalidValue,
                   keyPath: "camera[0].fps", line: 3, says: ["got 5000"]),
        BrokenFile(name: "size 0x0", text: "[[camera]]\nid = \"a\"\nsize = \"0x0\"\n", kind: .invalidValue,
                   keyPath: "camera[0].size", line: 3, says: ["WIDTHxHEIGHT", #"got "0x0""#]),
        BrokenFile(name: "quality 0", text: "[[camera]]\nid = \"a\"\nquality = 0\n", kind: .invalidValue,
                   keyPath: "camera[0].quality", line: 3, says: ["from 1 to 100; got 0"]),
        BrokenFile(name: "quality as a float", text: "[[camera]]\nid = \"a\"\nquality = 85.5\n", kind: .wrongType,
                   keyPath: "camera[0].quality", line: 3, says: ["whole number"]),
        BrokenFile(name: "bad format", text: "[[camera]]\nid = \"a\"\nformat = \"H.264\"\n", kind: .invalidValue,
                   keyPath: "camera[0].format", line: 3, says: ["FourCC"]),
        BrokenFile(name: "autostart as a string", text: "[[camera]]\nid = \"a\"\nautostart = \"yes\"\n", kind: .wrongType,
                   keyPath: "camera[0].autostart", line: 3, says: ["true or false"]),
        BrokenFile(name: "duplicate camera ids", text: "[[camera]]\nid = \"bench\"\n[[camera]]\nid = \"door\"\n[[camera]]\n# again\nid = \"bench\"\n",
                   kind: .invalidValue, keyPath: "camera[2].id", line: 7, says: ["already the id of camera[0]"]),
        BrokenFile(name: "bad id characters", text: "[[camera]]\nid = \"my cam\"\n", kind: .invalidValue,
                   keyPath: "camera[0].id", line: 2, says: ["letters, digits, '-' or '_'", #"got "my cam""#]),
        BrokenFile(name: "missing id", text: "[[camera]]\nid = \"a\"\n\n[[camera]]\nfps = 5\n", kind: .missingKey,
                   keyPath: "camera[1]", line: 4, says: ["camera[1] has no id"]),
        BrokenFile(name: "[camera] instead of [[camera]]", text: "[camera]\nid = \"a\"\n", kind: .wrongType,
                   keyPath: "camera", line: 1, says: ["[[camera]]"]),
        BrokenFile(name: "socket_mode not octal", text: "[daemon]\nsocket_mode = \"0689\"\n", kind: .invalidValue,
                   keyPath: "daemon.socket_mode", line: 2, says: ["octal"]),
        BrokenFile(name: "socket_mode above 0777", text: "[daemon]\nsocket_mode = \"1777\"\n", kind: .invalidValue,
                   keyPath: "daemon.socket_mode", line: 2, says: ["no greater than \"0777\""]),
        BrokenFile(name: "socket_mode as a number", text: "[daemon]\nsocket_mode = 432\n", kind: .wrongType,
                   keyPath: "daemon.socket_mode", line: 2, says: ["quote it"]),
        BrokenFile(name: "relative socket path", text: "[daemon]\nsocket = \"camd.sock\"\n", kind: .invalidValue,
                   keyPath: "daemon.socket", line: 2, says: ["absolute path"]),
        BrokenFile(name: "bad log level", text: "[daemon]\nlog_level = \"warn\"\n", kind: .invalidValue,
                   keyPath: "daemon.log_level", line: 2, says: ["one of trace, debug", "did you mean warning?"]),
        BrokenFile(name: "tcp without a port", text: "[daemon]\ntcp = \"localhost\"\n", kind: .invalidValue,
                   keyPath: "daemon.tcp", line: 2, says: ["needs a port"]),
        BrokenFile(name: "tcp with a bad port", text: "[daemon]\ntcp = \"127.0.0.1:99999\"\n", kind: .invalidValue,
                   keyPath: "daemon.tcp", line: 2, says: ["port from 1 to 65535"]),
        BrokenFile(name: "non-loopback tcp without a token", text: "[daemon]\nlog_level = \"info\"\ntcp = \"0.0.0.0:8080\"\n",
                   kind: .missingKey, keyPath: "daemon.tcp", line: 3, says: ["tcp_token is required"]),
        BrokenFile(name: "read-only group equal to socket group", text: "[daemon]\nread_only_group = \"video\"\n",
                   kind: .invalidValue, keyPath: "daemon.read_only_group", line: 2, says: ["same as socket_group"]),
        BrokenFile(name: "shutdown_timeout zero", text: "[daemon]\nshutdown_timeout = 0\n", kind: .invalidValue,
                   keyPath: "daemon.shutdown_timeout", line: 2, says: ["above 0"]),
        BrokenFile(name: "an impossible size", text: "[[camera]]\nid = \"a\"\nsize = \"100000x100000\"\n", kind: .invalidValue,
                   keyPath: "camera[0].size", line: 3, says: ["at most 16384"]),
        BrokenFile(name: "idle_timeout not a duration", text: "[daemon]\nidle_timeout = \"soon\"\n", kind: .invalidValue,
                   keyPath: "daemon.idle_timeout", line: 2, says: ["duration"]),
        BrokenFile(name: "name without .jpg", text: "[[camera]]\nid = \"a\"\n[camera.photos]\nname = \"{seq}.png\"\n",
                   kind: .invalidValue, keyPath: "camera[0].photos.name", line: 4, says: ["must end in .jpg"]),
        BrokenFile(name: "name with a slash", text: "[[camera]]\nid = \"a\"\n[camera.photos]\nname = \"x/{seq}.jpg\"\n",
                   kind: .invalidValue, keyPath: "camera[0].photos.name", line: 4, says: ["without '/'"]),
        BrokenFile(name: "name with an unknown placeholder", text: "[[camera]]\nid = \"a\"\n[camera.photos]\nname = \"{cam}-{seq}.jpg\"\n",
                   kind: .invalidValue, keyPath: "camera[0].photos.name", line: 4, says: ["{cam}", "did you mean {camera}?"]),
        BrokenFile(name: "bad byte size", text: "[[camera]]\nid = \"a\"\n[camera.photos]\nkeep_count = 5\nkeep_bytes = \"2Q\"\n",
                   kind: .invalidValue, keyPath: "camera[0].photos.keep_bytes", line: 5, says: [#"got "2Q""#, "\"2G\""]),
        BrokenFile(name: "bad duration", text: "[[camera]]\nid = \"a\"\n[camera.photos]\nkeep_age = \"soon\"\n",
                   kind: .invalidValue, keyPath: "camera[0].photos.keep_age", line: 4, says: ["duration"]),
        BrokenFile(name: "negative interval", text: "[[camera]]\nid = \"a\"\nphotos = { interval = -5 }\n",
                   kind: .invalidValue, keyPath: "camera[0].photos.interval", line: 3, says: ["from 0.1"]),
        BrokenFile(name: "keep_count zero", text: "[[camera]]\nid = \"a\"\n[camera.photos]\nkeep_count = 0\n",
                   kind: .invalidValue, keyPath: "camera[0].photos.keep_count", line: 4, says: ["above 0"]),
        BrokenFile(name: "control not spelled as v4l2-ctl does", text: "[[camera]]\nid = \"a\"\n[camera.controls]\nBrightness = 3\n",
                   kind: .unknownKey, keyPath: "camera[0].controls.Brightness", line: 4, says: ["write brightness"]),
        BrokenFile(name: "control of the wrong type", text: "[[camera]]\nid = \"a\"\n[camera.controls]\ngain = [1, 2]\n",
                   kind: .wrongType, keyPath: "camera[0].controls.gain", line: 4, says: ["a number, true or false"]),
        BrokenFile(name: "image rotate not a right angle", text: "[[camera]]\nid = \"a\"\n[camera.image]\nmax = 640\nrotate = 45\n",
                   kind: .invalidValue, keyPath: "camera[0].image.rotate", line: 5,
                   says: ["camera[0].image.rotate must be 0, 90, 180 or 270", "got 45"]),
        BrokenFile(name: "image width zero", text: "[[camera]]\nid = \"a\"\n[camera.image]\nwidth = 0\n",
                   kind: .invalidValue, keyPath: "camera[0].image.width", line: 4, says: ["camera[0].image.width must be a whole number from 1 to 8192; got 0"]),
        BrokenFile(name: "image fit unknown", text: "[[camera]]\nid = \"a\"\nimage = { fit = \"zoom\" }\n",
                   kind: .invalidValue, keyPath: "camera[0].image.fit", line: 3, says: ["contain, cover or stretch"]),
        BrokenFile(name: "image crop malformed", text: "[[camera]]\nid = \"a\"\n[camera.image]\ncrop = \"0,0,10\"\n",
                   kind: .invalidValue, keyPath: "camera[0].image.crop", line: 4, says: ["x,y,w,h"]),
        BrokenFile(name: "image width as a float", text: "[[camera]]\nid = \"a\"\n[camera.image]\nwidth = 64.5\n",
                   kind: .wrongType, keyPath: "camera[0].image.width", line: 4, says: ["whole number of pixels"]),
        BrokenFile(name: "image chroma unknown", text: "[[camera]]\nid = \"a\"\n[camera.image]\nchroma = \"4:2:2\"\n",
                   kind: .invalidValue, keyPath: "camera[0].image.chroma", line: 4, says: [#""4:2:0" or "camera""#]),
        BrokenFile(name: "image corner unknown", text: "[[camera]]\nid = \"a\"\n[camera.image]\noverlay = \"x\"\noverlay_corner = \"middle\"\n",
                   kind: .invalidValue, keyPath: "camera[0].image.overlay_corner", line: 5, says: [#""top-left", "top-right""#]),
        BrokenFile(name: "typo in image", text: "[[camera]]\nid = \"a\"\n[camera.image]\nrotaet = 90\n",
                   kind: .unknownKey, keyPath: "camera[0].image.rotaet", line: 4, says: ["did you mean rotate?"]),
        BrokenFile(name: "image key in the camera table", text: "[[camera]]\nid = \"a\"\nrotate = 90\n",
                   kind: .unknownKey, keyPath: "camera[0].rotate", line: 3, says: ["it belongs under [camera.image]"]),
        BrokenFile(name: "stream_overlay without an overlay", text: "[[camera]]\nid = \"a\"\n[camera.image]\nstream_overlay = true\n",
                   kind: .missingKey, keyPath: "camera[0].image.stream_overlay", line: 4, says: ["no overlay to draw"]),
        BrokenFile(name: "overlay too long", text: "[[camera]]\nid = \"a\"\n[camera.image]\noverlay = \"\(String(repeating: "x", count: 201))\"\n",
                   kind: .invalidValue, keyPath: "camera[0].image.overlay", line: 4, says: ["at most 200 bytes"]),
        BrokenFile(name: "latitude out of range", text: "[[camera]]\nid = \"a\"\nlocation = { latitude = 91, longitude = 0 }\n",
                   kind: .invalidValue, keyPath: "camera[0].location.latitude", line: 3, says: ["-90 to 90", "got 91"]),
        BrokenFile(name: "longitude out of range", text: "[[camera]]\nid = \"a\"\n[camera.location]\nlatitude = 10\nlongitude = -180.5\n",
                   kind: .invalidValue, keyPath: "camera[0].location.longitude", line: 5, says: ["-180 to 180", "got -180.5"]),
        BrokenFile(name: "location without longitude", text: "[[camera]]\nid = \"a\"\n[camera.location]\nlatitude = 10\n",
                   kind: .missingKey, keyPath: "camera[0].location.longitude", line: 3, says: ["needs both latitude and longitude"]),
        BrokenFile(name: "latitude as a string", text: "[[camera]]\nid = \"a\"\n[camera.location]\nlatitude = \"51N\"\nlongitude = 0\n",
                   kind: .wrongType, keyPath: "camera[0].location.latitude", line: 4, says: ["degrees north"]),
        BrokenFile(name: "typo in location", text: "[[camera]]\nid = \"a\"\n[camera.location]\nlatitude = 1\nlongitude = 2\nelevation = 3\n",
                   kind: .unknownKey, keyPath: "camera[0].location.elevation", line: 6, says: ["known keys here are latitude, longitude, altitude"]),
        BrokenFile(name: "no encoder threads", text: "[[camera]]\nid = \"a\"\nencoder_threads = 0\n",
                   kind: .invalidValue, keyPath: "camera[0].encoder_threads", line: 3, says: ["from 1 to 16", "got 0"]),
        BrokenFile(name: "encode_every_frame as a string", text: "[[camera]]\nid = \"a\"\nencode_every_frame = \"yes\"\n",
                   kind: .wrongType, keyPath: "camera[0].encode_every_frame", line: 3, says: ["true or false"]),
    ]

    @Test(arguments: cases) func pointsAtTheKeyAndLine(_ broken: BrokenFile) {
        do {
            let configuration = try DaemonConfiguration.parse(broken.text, source: "/etc/camd/camd.toml")
            Issue.record("accepted: \(configuration)")
        } catch {
            #expect(error.kind == broken.kind)
            #expect(error.keyPath == broken.keyPath)
            #expect(error.line == broken.line)
            #expect(error.source == "/etc/camd/camd.toml")
            for phrase in broken.says {
                #expect(error.description.contains(phrase), "\(error.description) should say \(phrase)")
            }
        }
    }

    @Test func descriptionReadsLikeACompilerMessage() {
        let text = "[[camera]]\nid = \"a\"\n\n[[camera]]\nid = \"b\"\nfps = \"fast\"\n"
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse(text, source: "/etc/camd/camd.toml") }
        do {
            _ = try DaemonConfiguration.parse(text, source: "/etc/camd/camd.toml")
        } catch {
            #expect(error.description == #"/etc/camd/camd.toml:6: camera[1].fps must be a number above 0 and at most 1000; got "fast""#)
        }
    }

    @Test func syntaxErrorsKeepTheColumn() {
        do {
            _ = try DaemonConfiguration.parse("[daemon]\nsocket = \"/a\" x\n", source: "s.toml")
            Issue.record("accepted bad TOML")
        } catch {
            #expect(error.line == 2)
            #expect(error.column != nil)
            #expect(error.description.hasPrefix("s.toml:2:\(error.column ?? 0): not valid TOML"))
        }
    }
}

@Suite struct ConfigurationLoadingTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("camd-config-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path

    @Test func aMissingExplicitPathIsAnError() {
        let path = folder + "/nowhere.toml"
        do {
            _ = try DaemonConfiguration.load(path: path)
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.kind == .unreadable)
            #expect(error.source == path)
            #expect(error.description.hasPrefix(path + ": no such file"))
        }
    }

    @Test func aMissingDefaultPathGivesTheDefaults() throws {
        #expect(try DaemonConfiguration.load(path: folder + "/camd.toml", defaultsIfMissing: true) == DaemonConfiguration())
        if !FileManager.default.fileExists(atPath: DaemonConfiguration.defaultPath) {
            #expect(try DaemonConfiguration.load(path: DaemonConfiguration.defaultPath) == DaemonConfiguration())
        }
    }

    @Test func loadsAFileAndNamesItInErrors() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let good = folder + "/good.toml", bad = folder + "/bad.toml"
        try Data("[daemon]\nlog_level = \"error\"\n".utf8).write(to: URL(fileURLWithPath: good))
        try Data("[daemon]\n\nlog_level = \"loud\"\n".utf8).write(to: URL(fileURLWithPath: bad))
        #expect(try DaemonConfiguration.load(path: good).logLevel == "error")
        do {
            _ = try DaemonConfiguration.load(path: bad, defaultsIfMissing: true)
            Issue.record("loaded a bad file")
        } catch {
            #expect(error.description.hasPrefix(bad + ":3: daemon.log_level must be one of"))
        }
        do {
            _ = try DaemonConfiguration.load(path: folder)
            Issue.record("loaded a folder")
        } catch {
            #expect(error.kind == .unreadable)
            #expect(error.description.contains("folder"))
        }
    }

    @Test func rejectsTextThatIsNotUTF8() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/latin1.toml"
        try Data([0x23, 0x20, 0xE9, 0x0A]).write(to: URL(fileURLWithPath: path))
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.load(path: path) }
    }

    /// The example in docs/configuration.md must stay a valid file.
    @Test func theDocumentedExampleParses() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")
        let markdown = try String(contentsOf: docs, encoding: .utf8)
        guard let start = markdown.range(of: "<!-- example -->\n```toml\n"),
              let end = markdown.range(of: "```", range: start.upperBound..<markdown.endIndex) else {
            Issue.record("docs/configuration.md has no marked ```toml example")
            return
        }
        let configuration = try DaemonConfiguration.parse(String(markdown[start.upperBound..<end.lowerBound]), source: "docs")
        #expect(configuration.cameras.count >= 2)
        #expect(configuration.cameras.first?.video.record == .continuous)
        #expect(configuration.cameras.first?.video.encoder.bitrate == 3_000_000)
    }
}

@Suite struct ConfigurationValueTests {
    @Test(arguments: durationCases)
    func durations(_ text: String, _ seconds: Double) {
        #expect(ValueSpelling.seconds(parsing: text) == seconds)
    }

    @Test(arguments: ["", "s", "10x", "-5s", "10 m", "1.2.3s", "5M", "inf", "nan", "1e3"])
    func badDurations(_ text: String) {
        #expect(ValueSpelling.seconds(parsing: text) == nil)
    }

    static let kib: Int64 = 1024, mib: Int64 = 1024 * 1024, gib: Int64 = 1024 * 1024 * 1024
    static let byteSizeCases: [(String, Int64)] = [
        ("1000", 1000), ("500K", 500 * kib), ("500M", 500 * mib), ("2G", 2 * gib), ("1T", 1024 * gib),
        ("2GB", 2 * gib), ("2GiB", 2 * gib), ("2g", 2 * gib), ("1.5K", 1536), ("10 M", 10 * mib), ("1000B", 1000),
    ]
    static let durationCases: [(String, Double)] = [
        ("90", 90), ("1.5", 1.5), ("90s", 90), ("10m", 600), ("2h", 7200), ("7d", 604_800), ("1w", 604_800),
        ("250ms", 0.25), ("1h30m", 5400), ("1h 30m", 5400), (" 5s ", 5), ("0", 0),
    ]

    @Test(arguments: byteSizeCases)
    func byteSizes(_ text: String, _ bytes: Int64) {
        #expect(ValueSpelling.byteCount(parsing: text) == bytes)
    }

    @Test(arguments: ["", "G", "2Q", "-1G", "1.5", "iB", "5iB", "99999999T"])
    func badByteSizes(_ text: String) {
        #expect(ValueSpelling.byteCount(parsing: text) == nil)
    }

    @Test func listenAddresses() {
        #expect(DaemonConfiguration.hostAndPort(of: "127.0.0.1:8080").map { "\($0.host) \($0.port)" } == "127.0.0.1 8080")
        #expect(DaemonConfiguration.hostAndPort(of: "[::1]:80").map { "\($0.host) \($0.port)" } == "::1 80")
        #expect(DaemonConfiguration.hostAndPort(of: "cam.local:443").map { "\($0.host) \($0.port)" } == "cam.local 443")
        for bad in ["localhost", ":8080", "host:", "host:0", "host:65536", "[::1]", "a b:80", "::1:80"] {
            #expect(DaemonConfiguration.hostAndPort(of: bad) == nil, "\(bad)")
        }
        #expect(DaemonConfiguration.isLoopback(host: "127.0.0.1"))
        #expect(DaemonConfiguration.isLoopback(host: "127.1.2.3"))
        #expect(DaemonConfiguration.isLoopback(host: "localhost"))
        #expect(DaemonConfiguration.isLoopback(host: "::1"))
        #expect(!DaemonConfiguration.isLoopback(host: "0.0.0.0"))
        #expect(!DaemonConfiguration.isLoopback(host: "192.168.1.2"))
        #expect(!DaemonConfiguration.isLoopback(host: "127.example.com"))
    }

    @Test func suggestionsComeFromEditDistance() {
        #expect(Suggestion.editDistance("fsp", "fps") == 1)
        #expect(Suggestion.closest(to: "fsp", in: DaemonConfiguration.cameraKeys) == "fps")
        #expect(Suggestion.closest(to: "zzzzzz", in: DaemonConfiguration.cameraKeys) == nil)
        #expect(Suggestion.closest(to: "warn", in: DaemonConfiguration.logLevels) == "warning")
        #expect(Suggestion.closest(to: "keep", in: DaemonConfiguration.photoKeys) == nil)  // abbreviates three keys
    }
}

@Suite struct KeyLineTests {
    @Test func findsKeysInEveryTOMLShape() {
        let text = """
            title = "x"            # 1
            [daemon]               # 2
            socket = "/a"          # 3
            motd = '''
            fake = 1
            '''
            log_level = "info"     # 7
            [[camera]]             # 8
            id = "a"               # 9
            photos.interval = 5    # 10
            [[camera]]             # 11
            "id" = "b"             # 12
            photos = { name = "n.jpg", keep_count = 3 }  # 13
            [camera.controls]      # 14
            brightness = 1         # 15
            list = [
              "a = b",
              { inner = 1 },
            ]
            after = 1              # 20
            """
        let lines = DaemonConfiguration.KeyLines(text)
        #expect(lines.line(of: "title") == 1)
        #expect(lines.line(of: "daemon") == 2)
        #expect(lines.line(of: "daemon.socket") == 3)
        #expect(lines.line(of: "daemon.fake") == 2)  // not line 5, inside the string: falls back to [daemon]
        #expect(lines.line(of: "daemon.log_level") == 7)
        #expect(lines.line(of: "camera[0]") == 8)
        #expect(lines.line(of: "camera[0].id") == 9)
        #expect(lines.line(of: "camera[0].photos.interval") == 10)
        #expect(lines.line(of: "camera[1]") == 11)
        #expect(lines.line(of: "camera[1].id") == 12)
        #expect(lines.line(of: "camera[1].photos.keep_count") == 13)
        #expect(lines.line(of: "camera[1].photos.keep_age") == 13)
        #expect(lines.line(of: "camera[1].controls") == 14)
        #expect(lines.line(of: "camera[1].controls.brightness") == 15)
        #expect(lines.line(of: "camera[1].controls.list[1].inner") == 18)
        #expect(lines.line(of: "camera[1].controls.after") == 20)
        #expect(lines.line(of: "camera[1].missing") == 11)
        #expect(lines.line(of: "nothing") == nil)
    }
}
