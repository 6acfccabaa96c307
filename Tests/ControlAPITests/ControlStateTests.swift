import APIModel
import Foundation
import Testing
import V4L2

/// The controls' JSON: whole numbers keep all 64 bits, a libcamera float keeps its fraction.
@Suite struct ControlStateTests {
    static func json(_ control: DeviceControl) throws -> String {
        let encoder = APIJSON.encoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(ControlState(control)), as: UTF8.self)
    }

    @Test func aRealControlIsANumberWithItsFraction() throws {
        let brightness = DeviceControl.real(id: 9, label: "Brightness", .init(minimum: -1, maximum: 1, defaultValue: 0, value: 0.25))
        let text = try Self.json(brightness)
        #expect(text.contains(#""value":0.25"#) && text.contains(#""type":"float""#) && text.contains(#""step":0"#))
        let back = try APIJSON.decoder().decode(ControlState.self, from: Data(text.utf8))
        #expect(back.value == .real(0.25))
        #expect(back.minimum == .integer(-1), "-1.0 is written -1, and read back as a whole number")
    }

    @Test func aSixtyFourBitIntegerKeepsEveryDigit() throws {
        let wide = DeviceControl(id: 1, label: "Integer 64 Bits", name: "integer_64_bits", kind: .integer64,
                                 minimum: Int64.min, maximum: Int64.max, step: 1, defaultValue: 0, value: 9_007_199_254_740_993,
                                 menu: [], isReadOnly: false, isInactive: false)
        let text = try Self.json(wide)
        #expect(text.contains(#""value":9007199254740993"#) && text.contains(#""maximum":9223372036854775807"#))
        #expect(try APIJSON.decoder().decode(ControlState.self, from: Data(text.utf8)).value == .integer(9_007_199_254_740_993))
    }
}
