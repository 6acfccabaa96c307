import CaptureSession
@testable import Daemon
import Testing

/// `[daemon] rtsp`: where the cameras' RTSP listens, refused off loopback without the token
/// its clients must send, as `tcp` is.
@Suite struct RTSPConfigurationTests {
    @Test func rtspIsOffUnlessSet() throws {
        let configuration = try DaemonConfiguration.parse("[daemon]\nlog_level = \"info\"\n", source: "camd.toml")
        #expect(configuration.rtspListen == nil)
        #expect(CamdDaemon.rtspServer(configuration, cameras: Cameras([])) == nil)
        #expect(try DaemonConfiguration.parse("[daemon]\nrtsp = \"\"\n", source: "camd.toml").rtspListen == nil)
    }

    @Test func loopbackNeedsNoToken() throws {
        for listen in ["127.0.0.1:8554", "localhost:8554", "[::1]:8554"] {
            let configuration = try DaemonConfiguration.parse("[daemon]\nrtsp = \"\(listen)\"\n", source: "camd.toml")
            #expect(configuration.rtspListen == listen)
        }
    }

    @Test func offLoopbackWithoutATokenIsRefusedAndSaysWhatToAdd() {
        do {
            let configuration = try DaemonConfiguration.parse("[daemon]\nlog_level = \"info\"\nrtsp = \"0.0.0.0:8554\"\n", source: "/etc/camd/camd.toml")
            Issue.record("accepted: \(configuration)")
        } catch {
            #expect(error.kind == .missingKey)
            #expect(error.keyPath == "daemon.rtsp")
            #expect(error.line == 3)
            #expect(error.description.contains("tcp_token is required"), "\(error.description)")
            #expect(error.description.contains("or listen on 127.0.0.1"), "\(error.description)")
        }
    }

    @Test func offLoopbackWithATokenServesWithIt() throws {
        let configuration = try DaemonConfiguration.parse("[daemon]\nrtsp = \"0.0.0.0:8554\"\ntcp_token = \"s3cret\"\n", source: "camd.toml")
        #expect(configuration.rtspListen == "0.0.0.0:8554")
        let server = try #require(CamdDaemon.rtspServer(configuration, cameras: Cameras([CaptureSession(settings: CameraSettings(id: "door"))])))
        #expect(server.urls == ["rtsp://0.0.0.0:0/door"])
    }

    @Test func aListenAddressWithoutAPortIsRefused() {
        do {
            _ = try DaemonConfiguration.parse("[daemon]\nrtsp = \"localhost\"\n", source: "camd.toml")
            Issue.record("accepted rtsp without a port")
        } catch {
            #expect(error.keyPath == "daemon.rtsp")
            #expect(error.description.contains("needs a port"), "\(error.description)")
            #expect(error.description.contains("127.0.0.1:8554"), "\(error.description)")
        }
    }

    @Test func aChangeIsReportedAsNeedingARestart() throws {
        let old = DaemonConfiguration()
        var new = old
        new.rtspListen = "127.0.0.1:8554"
        #expect(ConfigurationReload.daemonChanges(from: old, to: new) == ["daemon.rtsp changed"])
    }
}
