import Foundation
import Testing

@testable import MIMEDocument

/// multipart/form-data fields, escaping, and the Content-Type value.
@Suite("Form data")
struct FormDataTests {
  @Test(arguments: [
    ("plain", "plain"),
    ("with \"quotes\"", "with %22quotes%22"),
    ("back\\slash", "back\\slash"),  // WHATWG leaves backslashes alone.
    ("cr\rlf\nboth\r\n", "cr%0Dlf%0Aboth%0D%0A"),
    ("semi;colon=equals", "semi;colon=equals"),
    ("100%", "100%"),  // A percent sign is not escaped (as browsers do).
    ("naïve €", "naïve €"),
    ("", ""),
  ])
  func escapeQuoted(input: String, expected: String) {
    #expect(FormDataEncoding.escapeQuoted(input) == expected)
  }

  @Test(arguments: [
    ("a.txt", "UTF-8''a.txt"),
    ("naïve €.txt", "UTF-8''na%C3%AFve%20%E2%82%AC.txt"),
    ("日本.png", "UTF-8''%E6%97%A5%E6%9C%AC.png"),
    ("q\"b\\", "UTF-8''q%22b%5C"),
    ("!#$&+-.^_`|~", "UTF-8''!#$&+-.^_`|~"),
  ])
  func extendedValue(input: String, expected: String) {
    #expect(FormDataEncoding.extendedValue(input) == expected)
  }

  @Test(
    arguments: [
      ("field", nil, "form-data; name=\"field\""),
      ("a\"b", nil, "form-data; name=\"a%22b\""),
      ("file", "photo.jpg", "form-data; name=\"file\"; filename=\"photo.jpg\""),
      ("file", "my \"best\"\r\n.jpg", "form-data; name=\"file\"; filename=\"my %22best%22%0D%0A.jpg\""),
      ("file", "C:\\dir\\a.txt", "form-data; name=\"file\"; filename=\"C:\\dir\\a.txt\""),
      (
        "file", "résumé.pdf",
        "form-data; name=\"file\"; filename=\"résumé.pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"
      ),
    ] as [(String, String?, String)])
  func contentDisposition(name: String, filename: String?, expected: String) {
    #expect(FormDataEncoding.contentDisposition(name: name, filename: filename) == expected)
  }

  @Test(arguments: [
    ("END_OF_PART", "END_OF_PART"),
    ("END_OF_PART_0000abcd", "END_OF_PART_0000abcd"),
    ("0000000b_tedborg_0000000c", "0000000b_tedborg_0000000c"),
    ("Look at that magic bird!", "\"Look at that magic bird!\""),
    ("a:b", "\"a:b\""),
    ("q\"b\\", "\"q\\\"b\\\\\""),
  ])
  func boundaryParameter(boundary: String, expected: String) {
    #expect(FormDataEncoding.parameterValue(boundary) == expected)
  }

  @Test func contentTypeNamesTheMultipartType() throws {
    let document = MIMEDocument()
    #expect(document.multipartType == .formData)
    #expect(document.contentType(boundary: "X") == "multipart/form-data; boundary=X")
    #expect(try document.contentTypeHeaderValue == "multipart/form-data; boundary=END_OF_PART")
    document.multipartType = .related
    #expect(try document.contentTypeHeaderValue == "multipart/related; boundary=END_OF_PART")
    let mixed = MIMEDocument(multipartType: .mixed)
    mixed.boundary = "a b"
    #expect(try mixed.contentTypeHeaderValue == "multipart/mixed; boundary=\"a b\"")
    #expect(MIMEDocument.MultipartType("multipart/x-custom").description == "multipart/x-custom")
  }

  @Test func formFieldsAndFilesRoundTrip() throws {
    let directory = try TemporaryDirectory()
    defer { directory.cleanUp() }
    let fileURL = try directory.file("report 1.csv", contents: "a,b\n1,2\n".utf8Data)
    let document = MIMEDocument()
    document.appendFormField(name: "title", value: "Grüße \"quoted\"")
    document.appendFormFile(
      name: "avatar", filename: "me.png", contentType: "image/png", data: Data([0x89, 0x50]))
    document.appendFormFile(name: "report", contentType: "text/csv", fileURL: fileURL)
    document.appendFormFile(name: "blob", filename: "ünï.bin", data: Data([1, 2, 3]))
    let (data, boundary) = try document.generateData()
    let parts = try #require(MIMEDocument.parts(boundary: boundary, data: data))
    #expect(
      parts == [
        .init(
          headers: ["Content-Disposition": "form-data; name=\"title\""], body: "Grüße \"quoted\"".utf8Data),
        .init(
          headers: [
            "Content-Disposition": "form-data; name=\"avatar\"; filename=\"me.png\"",
            "Content-Type": "image/png",
          ], body: Data([0x89, 0x50])),
        .init(
          headers: [
            "Content-Disposition": "form-data; name=\"report\"; filename=\"report 1.csv\"",
            "Content-Type": "text/csv",
          ], body: "a,b\n1,2\n".utf8Data),
        .init(
          headers: [
            "Content-Disposition":
              "form-data; name=\"blob\"; filename=\"ünï.bin\"; filename*=UTF-8''%C3%BCn%C3%AF.bin",
            "Content-Type": "application/octet-stream",
          ], body: Data([1, 2, 3])),
      ])
  }

  @Test func contentTypeWithLineBreakFailsGeneration() {
    let document = MIMEDocument()
    document.appendFormFile(name: "f", filename: "f", contentType: "text/plain\r\nX-Evil: 1", data: Data())
    #expect(throws: MIMEDocumentError.invalidHeader(name: "Content-Type")) { try document.generateData() }
  }
}
