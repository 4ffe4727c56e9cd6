import FetcherService
import Foundation
import Testing

@Suite("Form encoding (pure)")
struct FormEncodingTests {
  @Test(
    "application/x-www-form-urlencoded, WHATWG rules",
    arguments: [
      ("", ""),
      ("abcXYZ019", "abcXYZ019"),
      ("*-._", "*-._"),
      ("a b", "a+b"),
      ("  ", "++"),
      ("a+b", "a%2Bb"),
      ("1+1=2", "1%2B1%3D2"),
      ("a&b", "a%26b"),
      ("a=b", "a%3Db"),
      ("100%", "100%25"),
      ("~!'()", "%7E%21%27%28%29"),
      ("/?#[]@", "%2F%3F%23%5B%5D%40"),
      ("line\r\nbreak", "line%0D%0Abreak"),
      ("tab\there", "tab%09here"),
      ("café", "caf%C3%A9"),
      ("日本", "%E6%97%A5%E6%9C%AC"),
      ("😀", "%F0%9F%98%80"),
      ("e\u{301}", "e%CC%81"),
    ])
  func encodesOneString(input: String, expected: String) {
    #expect(FormURLEncoding.encode(input) == expected)
  }

  @Test func queryKeepsOrderRepeatsAndEmptyValues() {
    let query = FormURLEncoding.query([
      ("q", "swift & linux"), ("tag", "a"), ("tag", "b"), ("empty", ""), ("", "no name"), ("k=1", "v&2"),
    ])
    #expect(query == "q=swift+%26+linux&tag=a&tag=b&empty=&=no+name&k%3D1=v%262")
    #expect(FormURLEncoding.query([(String, String)]()) == "")
    #expect(FormURLEncoding.query(["a": "1", "a": "2"]) == "a=1&a=2")
  }

  @Test func appendingAQueryKeepsTheExistingQueryAndFragment() throws {
    let base = try #require(URL(string: "https://example.com/search?lang=en#results"))
    let url = base.appendingFormQuery([("q", "C++ & Swift"), ("page", "2")])
    #expect(url.absoluteString == "https://example.com/search?lang=en&q=C%2B%2B+%26+Swift&page=2#results")

    let bare = try #require(URL(string: "https://example.com/p"))
    #expect(bare.appendingFormQuery(["x": "1 2"]).absoluteString == "https://example.com/p?x=1+2")
    #expect(bare.appendingFormQuery([(String, String)]()) == bare)

    let emptyQuery = try #require(URL(string: "https://example.com/p?"))
    #expect(emptyQuery.appendingFormQuery([("a", "b")]).absoluteString == "https://example.com/p?a=b")
  }

  @Test func aStringLiteralIsATextValue() {
    let value: FormValue = "hello"
    #expect(value == .text("hello"))
    #expect(value.text == "hello")
    #expect(FormValue.data(Data([1])).text == nil)
  }
}
