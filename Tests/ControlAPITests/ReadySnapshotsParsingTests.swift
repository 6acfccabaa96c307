@testable import ControlAPI
import Foundation
import Testing

/// What `ReadySnapshots` takes as a snapshot poll from a request's target, and the capture
/// time header it writes: the router's reading and `%.6f`'s writing, without Foundation.
@Suite struct ReadySnapshotsParsingTests {
    @Test func aSnapshotTargetNamesItsCameraAndQuery() {
        #expect(ReadySnapshots.camera(in: "/v1/cameras/cam/snapshot")! == ("cam", ""))
        #expect(ReadySnapshots.camera(in: "/v1/cameras/front-door_2/snapshot?max_age_ms=500")! == ("front-door_2", "max_age_ms=500"))
        #expect(ReadySnapshots.camera(in: "/v1/cameras/cam/snapshot?")! == ("cam", ""))
        #expect(ReadySnapshots.camera(in: "/v1/cameras/caméra/snapshot?max_age_ms=1")! == ("caméra", "max_age_ms=1"))
        #expect(ReadySnapshots.camera(in: "/v1/cameras/c/snapshot")! == ("c", ""))
        for other in ["/v1/cameras//snapshot", "/v1/cameras/snapshot", "/v1/cameras/a/b/snapshot", "/v1/cameras/c%61m/snapshot",
                      "/v1/cameras/cam/snapshot/", "/v1/cameras/cam/stream", "/v1/cameras/cam", "//v1/cameras/cam/snapshot",
                      "http://camd/v1/cameras/cam/snapshot", "/V1/cameras/cam/snapshot", "", "?", "/snapshot",
                      "/v1/cameras/cam?/snapshot", "/v1/cameras/x/snap?shot", "/v1/cameras/?/snapshot"] {
            #expect(ReadySnapshots.camera(in: other) == nil, "\(other)")
        }
    }

    @Test func onlyAMaxAgeIsTakenFromTheQuery() {
        #expect(ReadySnapshots.maxAge("") == .some(nil))
        #expect(ReadySnapshots.maxAge("max_age_ms=250") == .some(0.25))
        #expect(ReadySnapshots.maxAge("max_age_ms=0") == .some(0))
        #expect(ReadySnapshots.maxAge("max_age_ms=3600000") == .some(3600))
        #expect(ReadySnapshots.maxAge("max_age_ms=0250") == .some(0.25))
        #expect(ReadySnapshots.maxAge("max_age_ms=1.5") == .some(0.0015))
        #expect(ReadySnapshots.maxAge("max_age_ms=+5") == .some(0.005))  // as the router's Double reads it
        // The router reads these, and answers the bad ones.
        for other in ["max_age_ms=-1", "max_age_ms=3600001", "max_age_ms=", "max_age_ms=nan", "max_age_ms=1&size=10x10",
                      "size=10x10", "quality=50", "max_age_ms=1&max_age_ms=2", "Max_Age_Ms=1",
                      "max_age_ms=36000000", "max_age_ms=99999999999999999999999", "max_age_ms=1e99", "max_age_ms=5 "] {
            #expect(ReadySnapshots.maxAge(Substring(other)) == nil, "\(other)")
        }
    }

    @Test func theCaptureTimeIsWrittenAsPrintfWritesIt() {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [0, 0.5, 1, 1.0000005, 0.0078125, 1795796552.177923, 1_700_000_000.999_999_6, 123.456_789_5]
        // Frame times are binary fractions: exact halves of a microsecond happen, and round to even.
        for k in 0..<200 { values.append(1_795_796_552 + Double(k) / 128) }
        for _ in 0..<5000 { values.append(Double.random(in: 1.6e9...1.9e9, using: &generator)) }
        for value in values {
            #expect(FrameHeader.seconds(value) == String(format: "%.6f", value), "\(value)")
        }
    }
}
