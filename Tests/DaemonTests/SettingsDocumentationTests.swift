import CaptureSession
@testable import Daemon
import Foundation
import Testing

/// docs/configuration.md and docs/api.md are held to the settings' declarations: every
/// declared key is documented where it belongs, with the declared default, every documented
/// key is declared, and the API's table of what a change restarts says what the declarations say.
@Suite struct SettingsDocumentationTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs")

    typealias Row = (keys: [String], cells: [String])

    /// The tables under each heading, each its rows that name keys: heading → [[(keys, cells)]].
    static func tables(_ file: String) throws -> [String: [[Row]]] {
        let text = try String(contentsOf: docs.appendingPathComponent(file), encoding: .utf8)
        var tables: [String: [[Row]]] = [:]
        var heading = "", inTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                heading = line.drop { $0 == "#" || $0 == " " }.replacingOccurrences(of: "`", with: "")
            }
            guard line.hasPrefix("|") else {
                inTable = false
                continue
            }
            if !inTable { tables[heading, default: []].append([]) }
            inTable = true
            guard line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let keys = cells[0].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") }
            tables[heading]![tables[heading]!.count - 1].append((keys, cells))
        }
        return tables
    }

    /// A Default cell as the declaration spells it: without Markdown's backticks.
    static func plain(_ cell: String) -> String { cell.replacingOccurrences(of: "`", with: "") }

    @Test func configurationMdListsEveryDeclaredKeyWithItsDefault() throws {
        let tables = try Self.tables("configuration.md")
        let sections: [(heading: String, keys: [String], defaults: [String: String])] = [
            ("[daemon]", DaemonConfiguration.keys.map(\.key), Dictionary(uniqueKeysWithValues: DaemonConfiguration.keys.map { ($0.key, $0.defaultText) })),
            ("[[camera]]", CameraSettings.keys.filter { $0.group == nil && $0.key != "controls" }.map(\.key) + ["id"],
             Dictionary(uniqueKeysWithValues: CameraSettings.keys.filter { $0.group == nil }.map { ($0.key, $0.defaultText) })),
        ] + CameraSettings.groups.map { group in
            let keys = CameraSettings.keys.filter { $0.group == group }
            return ("[camera.\(group)]", keys.map { String($0.name) }, Dictionary(uniqueKeysWithValues: keys.map { (String($0.name), $0.defaultText) }))
        }
        for section in sections {
            let rows = try #require(tables[section.heading]?.first, "docs/configuration.md has no table under \(section.heading)")
            let documented = rows.flatMap(\.keys)
            #expect(Set(documented) == Set(section.keys),
                    "\(section.heading): documented but not declared: \(Set(documented).subtracting(section.keys).sorted()); declared but not documented: \(Set(section.keys).subtracting(documented).sorted())")
            for row in rows {
                for key in row.keys {
                    guard let declared = section.defaults[key] else { continue }
                    #expect(Self.plain(row.cells[2]) == declared, "\(section.heading) \(key): the docs say the default is \(row.cells[2]), the declaration \(declared)")
                }
            }
        }
        // controls has a section of its own.
        let text = try String(contentsOf: Self.docs.appendingPathComponent("configuration.md"), encoding: .utf8)
        #expect(text.contains("### `[camera.controls]`"))
    }

    @Test func apiMdListsEveryConfigureFieldAndWhatItRestarts() throws {
        let tables = try Self.tables("api.md")
        let found = try #require(tables["POST /v1/cameras/{id}/configure"], "docs/api.md has no tables under POST /v1/cameras/{id}/configure")
        try #require(found.count == 2, "docs/api.md's configure section should have two tables, restarts then fields")
        let (restarts, rows) = (found[0], found[1])
        let top = CameraSettings.names(in: "").filter { $0 != "id" }
        // The table of fields: each top-level key and group once.
        let fields = rows.flatMap(\.keys)
        #expect(Set(fields) == Set(top), "fields documented but not declared: \(Set(fields).subtracting(top).sorted()); declared but not documented: \(Set(top).subtracting(fields).sorted())")
        // The table of restarts: `device | keys | ...`.
        for level in [ConfigureRestart.device, .encoders, .video, .none] {
            let row = try #require(restarts.first { $0.keys == [level.rawValue] }, "no `\(level.rawValue)` row in docs/api.md's restart table")
            let listed = row.cells[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") }
            let declared = top.filter { name in
                CameraSettings.keys.filter { ($0.group ?? $0.key) == name }.map(\.restart).contains(level)
            }
            #expect(Set(listed) == Set(declared), "restart \(level.rawValue): docs/api.md lists \(listed.sorted()), the declarations say \(declared.sorted())")
        }
    }

    /// The property names of an object schema in docs/openapi.yaml, found by indentation:
    /// `schema` (under components/schemas), then `path` of nested property names.
    static func openAPIProperties(_ schema: String, _ path: [String] = []) throws -> [String] {
        let lines = try String(contentsOf: docs.appendingPathComponent("openapi.yaml"), encoding: .utf8).split(separator: "\n").map(String.init)
        guard var start = lines.firstIndex(of: "    \(schema):") else { return [] }
        var indent = 4
        for name in [""] + path {
            if !name.isEmpty {
                guard let found = lines[start...].firstIndex(where: { $0.hasPrefix(String(repeating: " ", count: indent) + "\(name):") }) else { return [] }
                start = found
            }
            guard let properties = lines[start...].firstIndex(where: { $0.hasPrefix(String(repeating: " ", count: indent + 2) + "properties:") }) else { return [] }
            start = properties
            indent += 4
        }
        var names: [String] = []
        for line in lines[(start + 1)...] {
            let leading = line.prefix { $0 == " " }.count
            if leading < indent { break }
            if leading == indent, let colon = line.firstIndex(of: ":") { names.append(line[..<colon].trimmingCharacters(in: .whitespaces)) }
        }
        return names
    }

    @Test func openAPIDescribesEverySettingAndNoOther() throws {
        let top = CameraSettings.names(in: "").filter { $0 != "id" }
        #expect(Set(try Self.openAPIProperties("Configure")) == Set(top), "docs/openapi.yaml's Configure")
        #expect(Set(try Self.openAPIProperties("CameraSettings")) == Set(top + ["id"]), "docs/openapi.yaml's CameraSettings")
        for group in CameraSettings.groups {
            let declared = Set(CameraSettings.names(in: group))
            #expect(Set(try Self.openAPIProperties("Configure", [group])) == declared, "docs/openapi.yaml's Configure.\(group)")
            #expect(Set(try Self.openAPIProperties("CameraSettings", [group])) == declared, "docs/openapi.yaml's CameraSettings.\(group)")
        }
    }
}
