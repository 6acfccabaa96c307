import Foundation
import Testing
@testable import V4L2

@Suite struct DeviceAccessTests {
    typealias Identity = DeviceAccess.Identity
    let video = Identity(id: 44, name: "video")
    let root = Identity(id: 0, name: "root")

    func camera(mode: UInt32 = 0o660, acl: [DeviceAccess.ACLEntry] = []) -> DeviceAccess.Node {
        DeviceAccess.Node(path: "/dev/video0", owner: root, group: video, mode: mode, isCharacterDevice: true, acl: acl)
    }

    func alice(groups: [Identity] = [], configured: [Identity] = []) -> DeviceAccess.Credentials {
        let own = Identity(id: 1000, name: "alice")
        return .init(user: own, primaryGroup: own, groups: [own] + groups, configuredGroups: [own] + configured)
    }

    @Test func notInGroupIsToldTheUsermodFix() throws {
        let report = DeviceAccess.evaluate(camera(), alice())
        #expect(!report.allowed)
        let problem = try #require(report.problem)
        #expect(problem.contains("/dev/video0 is crw-rw---- root:video"))
        #expect(problem.contains("user alice (uid 1000) is not in group video"))
        #expect(problem.contains("sudo usermod -aG video alice"))
    }

    @Test func addedToGroupButNotLoggedInAgain() throws {
        let report = DeviceAccess.evaluate(camera(), alice(configured: [video]))
        #expect(!report.allowed)
        #expect(try #require(report.problem).contains("log out and in again"))
    }

    @Test func groupMemberIsAllowed() {
        let report = DeviceAccess.evaluate(camera(), alice(groups: [video]))
        #expect(report.allowed)
        #expect(report.grantedBy == "group video")
    }

    @Test func groupWithoutWriteIsExplained() throws {
        let report = DeviceAccess.evaluate(camera(mode: 0o640), alice(groups: [video]))
        #expect(!report.allowed)
        #expect(try #require(report.problem).contains("that group has no read and write access"))
    }

    @Test func uaccessACLGrantsTheSeatUser() {
        let acl: [DeviceAccess.ACLEntry] = [
            .init(tag: .userObject, permissions: 6), .init(tag: .user, permissions: 6, id: 1000),
            .init(tag: .groupObject, permissions: 6), .init(tag: .mask, permissions: 6), .init(tag: .other, permissions: 0),
        ]
        let report = DeviceAccess.evaluate(camera(acl: acl), alice())
        #expect(report.allowed)
        #expect(report.grantedBy?.contains("ACL entry for user alice") == true)
        #expect(camera(acl: acl).modeString == "crw-rw----+")
    }

    @Test func aclMaskLimitsNamedEntries() {
        let acl: [DeviceAccess.ACLEntry] = [
            .init(tag: .userObject, permissions: 6), .init(tag: .user, permissions: 6, id: 1000),
            .init(tag: .groupObject, permissions: 6), .init(tag: .mask, permissions: 4), .init(tag: .other, permissions: 0),
        ]
        #expect(!DeviceAccess.evaluate(camera(acl: acl), alice()).allowed)
    }

    @Test func rootAndOthers() {
        let rootCredentials = DeviceAccess.Credentials(user: root, primaryGroup: root, groups: [root], configuredGroups: [root])
        #expect(DeviceAccess.evaluate(camera(mode: 0o600), rootCredentials).allowed)
        #expect(DeviceAccess.evaluate(camera(mode: 0o666), alice()).allowed)
    }

    @Test func nobodyWithoutANameGetsAUnitFix() throws {
        let nobody = DeviceAccess.Credentials(user: Identity(id: 65534, name: nil), primaryGroup: Identity(id: 65534, name: nil),
                                              groups: [], configuredGroups: [])
        let problem = try #require(DeviceAccess.evaluate(camera(), nobody).problem)
        #expect(problem.contains("uid 65534"))
        #expect(problem.contains("SupplementaryGroups=video"))
    }

    @Test func parsesKernelACLBytes() {
        func entry(_ tag: UInt16, _ perm: UInt16, _ id: UInt32) -> [UInt8] {
            [UInt8(tag & 0xff), UInt8(tag >> 8), UInt8(perm), 0] + (0..<4).map { UInt8((id >> ($0 * 8)) & 0xff) }
        }
        let bytes: [UInt8] = [2, 0, 0, 0] + entry(1, 6, 0xffff_ffff) + entry(2, 6, 1000) + entry(4, 6, 0xffff_ffff)
            + entry(0x10, 6, 0xffff_ffff) + entry(0x20, 0, 0xffff_ffff)
        let acl = parseACL(bytes)
        #expect(acl.count == 5)
        #expect(acl[1] == .init(tag: .user, permissions: 6, id: 1000))
        // A minimal ACL (only the mode's three entries) is no extended ACL at all.
        #expect(parseACL([2, 0, 0, 0] + entry(1, 6, 0) + entry(4, 6, 0) + entry(0x20, 0, 0)).isEmpty)
    }

    @Test func checksARealFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camd-access-\(getpid())").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(), attributes: [.posixPermissions: 0o600])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let report = try #require(DeviceAccess.check(path))
        #expect(report.node.mode == 0o600)
        #expect(!report.node.isCharacterDevice)
        #expect(DeviceAccess.check("/nonexistent/camd") == nil)
    }
}

@Suite struct OpenRefusalTests {
    @Test func aRegularFileIsNotACamera() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("camd-notacamera-\(getpid())").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("x".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: DeviceError.self) { try VideoDevice(path: path) }
        do { _ = try VideoDevice(path: path) } catch {
            #expect(error.kind == .notACamera)
            #expect(error.message.contains("not a character device"))
        }
    }

    @Test func anotherCharacterDeviceIsNotACamera() {
        do { _ = try VideoDevice(path: "/dev/null"); Issue.record("opened /dev/null") } catch {
            #expect(error.kind == .notACamera)
        }
    }

    @Test func aMissingNodeSaysSo() {
        do { _ = try VideoDevice(path: "/dev/video-camd-missing"); Issue.record("opened a missing node") } catch {
            #expect(error.kind == .noSuchDevice)
            #expect(error.message.contains("camctl devices"))
        }
    }
}
