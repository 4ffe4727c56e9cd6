import Foundation
import SessionFetcher
import Testing

/// The package's JSON writer (the test server's bodies, the HAR log).
@Suite("JSON writer")
struct JSONValueTests {
  @Test(
    "JSON text",
    arguments: [
      (JSONValue.string(#"a"b\c/d"#), #""a\"b\\c/d""#),
      (.string("\n\r\t\u{8}\u{C}\u{1}\u{1F}\u{7F}"), #""\n\r\t\b\f\u0001\u001f\#u{7F}""#),
      (.string("ünï € 🙂"), #""ünï € 🙂""#), (.integer(-42), "-42"), (.number(500), "500"),
      (.number(-0.25), "-0.25"), (.number(1e-5), "1e-05"), (.number(1e20), "1e+20"),
      (.number(.infinity), "0"), (.number(.nan), "0"), (.bool(true), "true"), (.bool(false), "false"),
      (.array([]), "[]"), (.object([]), "{}"),
      (
        .object([("s", .string("a\"b\\c\n\u{1}")), ("i", .integer(-3)), ("b", .bool(false))]),
        #"{"s":"a\"b\\c\n\u0001","i":-3,"b":false}"#
      ),
      (
        .compactObject([
          ("b", .integer(1)), ("a", nil), ("_c", .array([.string("x"), .object([("k", .bool(false))])])),
        ]),
        #"{"b":1,"_c":["x",{"k":false}]}"#
      ),
    ])
  func text(_ value: JSONValue, _ expected: String) {
    #expect(value.text == expected)
  }

  /// The streaming writer writes the same text as the value it would build.
  @Test func writerMatchesValue() {
    var writer = JSONWriter()
    writer.beginObject()
    writer.field("s", string: "a\"b\\c\n\u{1}ü")
    writer.field("absent", string: nil)
    writer.field("i", integer: -3)
    writer.field("n", number: 0.25)
    writer.field("whole", number: 500)
    writer.field("b", bool: false)
    writer.key("list")
    writer.beginArray()
    writer.string("x")
    writer.beginObject()
    writer.field("k", bool: true)
    writer.endObject()
    writer.beginArray()
    writer.endArray()
    writer.value(.object([("v", .integer(1))]))
    writer.endArray()
    writer.key("empty")
    writer.beginObject()
    writer.endObject()
    writer.endObject()
    let value = JSONValue.object([
      ("s", .string("a\"b\\c\n\u{1}ü")), ("i", .integer(-3)), ("n", .number(0.25)), ("whole", .number(500)),
      ("b", .bool(false)),
      (
        "list",
        .array([.string("x"), .object([("k", .bool(true))]), .array([]), .object([("v", .integer(1))])])
      ),
      ("empty", .object([])),
    ])
    #expect(String(decoding: writer.bytes, as: UTF8.self) == value.text)
  }

  /// Every control character, quotes, backslashes and non-ASCII text read back unchanged.
  @Test func stringsReadBack() throws {
    let strings =
      (0..<0x20).map { String(UnicodeScalar(UInt8($0))) } + [
        "\u{7F}", "\"", "\\", "/", "\u{2028}\u{2029}", "a\u{0}b", "résumé", "漢字", "🙂\r\n", "",
      ]
    let text = JSONValue.array(strings.map(JSONValue.string)).bytes
    let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text)) as? [String])
    #expect(parsed == strings)
  }
}
