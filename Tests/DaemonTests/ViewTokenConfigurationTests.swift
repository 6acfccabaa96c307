import CaptureSession
@testable import Daemon
import Testing

/// `[daemon] tcp_view_token`: a second token that may only watch. It needs tcp_token, must
/// differ from it, and is no substitute for it where tcp_token is required.
@Suite struct ViewTokenConfigurationTests {
    @Test func bothTokensAreRead() throws {
        let configuration = try DaemonConfiguration.parse(
            "[daemon]\ntcp = \"0.0.0.0:8080\"\ntcp_token = \"full-secret\"\ntcp_view_token = \"view-secret\"\nrtsp = \"0.0.0.0:8554\"\n",
            source: "camd.toml")
        #expect(configuration.tcpToken == "full-secret")
        #expect(configuration.tcpViewToken == "view-secret")
        let server = try #require(CamdDaemon.rtspServer(configuration, cameras: Cameras([])))
        #expect(server.configuration.viewToken == "view-secret", "RTSP takes the viewer token as a password too")
        #expect(try DaemonConfiguration.parse("[daemon]\n", source: "camd.toml").tcpViewToken == nil)
    }

    @Test func theSameTokenTwiceIsRefusedWithItsLine() {
        do {
            let configuration = try DaemonConfiguration.parse(
                "[daemon]\ntcp = \"127.0.0.1:8080\"\ntcp_token = \"same\"\ntcp_view_token = \"same\"\n", source: "/etc/camd/camd.toml")
            Issue.record("accepted: \(configuration)")
        } catch {
            #expect(error.kind == .invalidValue)
            #expect(error.keyPath == "daemon.tcp_view_token")
            #expect(error.line == 4)
            #expect(error.description.contains("the same as tcp_token"), "\(error.description)")
            #expect(error.description.contains("openssl rand"), "says how to make another: \(error.description)")
        }
    }

    @Test func aViewTokenAloneIsNotEnoughOffLoopback() {
        for (listen, key, line) in [("tcp = \"0.0.0.0:8080\"", "daemon.tcp", 2), ("rtsp = \"192.168.1.5:8554\"", "daemon.rtsp", 2)] {
            do {
                let configuration = try DaemonConfiguration.parse("[daemon]\n\(listen)\ntcp_view_token = \"view-secret\"\n", source: "camd.toml")
                Issue.record("accepted: \(configuration)")
            } catch {
                #expect(error.kind == .missingKey)
                #expect(error.keyPath == key)
                #expect(error.line == line)
                #expect(error.description.contains("tcp_token is required"), "\(error.description)")
                #expect(error.description.contains("tcp_view_token alone is not enough"), "\(error.description)")
            }
        }
    }

    @Test func aViewTokenWithoutTcpTokenIsRefusedOnLoopbackToo() {
        do {
            let configuration = try DaemonConfiguration.parse("[daemon]\ntcp = \"127.0.0.1:8080\"\ntcp_view_token = \"view-secret\"\n", source: "camd.toml")
            Issue.record("accepted: \(configuration)")
        } catch {
            #expect(error.kind == .missingKey)
            #expect(error.keyPath == "daemon.tcp_view_token")
            #expect(error.line == 3)
            #expect(error.description.contains("add tcp_token"), "\(error.description)")
        }
    }

    @Test func aViewTokenIsASecretWithoutSpaces() {
        for bad in ["\"\"", "\"two words\"", "42"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try DaemonConfiguration.parse("[daemon]\ntcp_token = \"full\"\ntcp_view_token = \(bad)\n", source: "camd.toml")
            }
        }
    }

    @Test func aChangeTakesARestart() {
        var changed = DaemonConfiguration(tcpToken: "full")
        changed.tcpViewToken = "view"
        #expect(ConfigurationReload.daemonChanges(from: DaemonConfiguration(tcpToken: "full"), to: changed) == ["daemon.tcp_view_token changed"])
    }
}
