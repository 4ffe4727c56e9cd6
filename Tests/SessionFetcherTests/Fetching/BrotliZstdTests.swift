import FetcherTesting
import Foundation
import SessionFetcher
import Testing

/// `Content-Encoding: br` and `zstd`, which both engines decode through the libcurl they load
/// (Debian 12's libcurl is built with both): bodies made by `brotli` and `zstd` themselves,
/// replayed byte for byte by a raw-socket server, arrive decoded, and the in-memory limit counts
/// decoded bytes (a bomb of 64 MiB of zeros in about 2 KiB).
@Suite("Decompression: br and zstd")
struct BrotliZstdTests {
  /// 2,000 numbered lines (60,890 bytes), the text the fixtures encode.
  static let text = Data((0..<2000).map { "line \($0): the quick brown fox\n" }.joined().utf8)

  /// `zstd -19` of ``text``.
  static let zstdText = fixture([
    "KLUv/QRoFAoApho2F4BNGgPAiOM4jsME1UV7772lTC5946h0PwApAC4A55xzzjnHGGOMMcaYUkoppZRS7u7u7u7MzMzMzP7/",
    "X1VVEzqmnG0CiCwKiQKyaAgSxODwYCQEgyMJVEJQHBIB53mapmmapmma5u7u7u6uqqqqqmpZlmVZlmVZppRSSimlhBBCCCGE",
    "0Akmk8lkMolEIpFIJBKJRB6Px+PxeDwej0aj0Wg0Go1GY7FYLBaLxWKxeJ7neZ5nJycnf9/3fdu2bdu2bdv2/////7+7u7u7",
    "e13XdV3XdV0nk8kUgPqoEaD5/e/Ao9I1ESAE/z+DP73Q3VVWMZVMLbPKqHKqmVJmlVnFVDO15It0oRZh4RVBhVMkCp2ISUKG",
    "4TAMhtEwLIbBMByGybAqESRkRBKhEAFCH5IHdQiOZrVYltVyWdj68ECrAowEADbfHwXg6fv0LB4AGAAdANu2bdsWERERERER",
    "ERERERERERERERERERERERERMW3btm3btm3btm3btm3btm3btm3btm3bFpmZmZmZmZmZmZmZmZmZmZmZmZlt27Zt27a1bdsG",
    "mZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmQGA+pwQED8A9947Abz3Tqx8BAAmnx8F4OkrSbAYABsAIABt27Zt27Zt",
    "27Zt27Zt27Ztbdu2bdu2bRsRERERERERERERERGxbdu2bdu2bdu2bdu2bRsRERERERERERERERERERGBiIiIiIiIiIiIiIiI",
    "iIiICJmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmIiIiIiIiA+twA99714L33qGFKAXwEACafHwXg6SuQsR4AGAAdAG3btm1b",
    "REQEIiIiIiIiIiIiIiIiIiIiIiIiIiIiYtu2bdu2bdu2bdu2bdu2bdu2bdu2bdu2DTMzM5OZmZmZmZmZmZmZmZmZmZlt27Zt",
    "27Zt27YFmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmZmYD63AD3PgO89x41+M4BPA4Adq5KC7CpA9zSNjkrRqcCNwBK",
    "AFQALpfL5XK5XC6Xy+VyuVwul8vlcrlcLpfL5XK5XC6Xy+VyuVwul8vlcrlcLpfL5XK5XC6Xy+VyBRvs7be7PPn58eLDg9//",
    "fnHi48OFBwc+3/VSJMUpjqIohiIornjRYiES4hAHURADERBHnCixjGSccYxiDCMYNz46liEZzhi6XC5XZEEOZEAeebLkMpN5",
    "5jGLOcxg3vzsXMZkPOMxFuMwBuONHzsuYiIe8RALcRAD8cSLFZcwCU94hEU4hEF44cOGC5iABzzAAhzAADzwYMFlkz17bLFD",
    "W1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tPeZRFOZRBeeXLlguZkIc8AoD6qCBE",
    "4ANwM8p5DRH8//MLB977fb/LByNy9Wv4993e7/u+7/e9PwMitNqbln/tL/2ZP/Gn+2k/6yf9ND/lZ/yEn+/TfbZP9rk+1af0",
    "iT7Pp/ksn+RzfIpP4RP4/J7es3tyz+2pPbMn9ryerGf1pJ7TU3pGT+j5PJ2n5sk8l2flmTyR5/E0nsWTeBqewjN4As/f6Tt7",
    "J+9AiQPsBwCmrjcH0KUD2zoQODYALwA0AGVZlmVZlmVZlsFgMBgMBoPBYDAYDAaDwWAwGAwGg8FgMBgMBoPBYDAYDAaDwWAw",
    "GAwGg8FgAWVZlmVZlmVZlmVZlmVZlmVZlmVZlmVZlmVZlmVZlmVZLsuyLMuyLMuyLMuyLMsyi8VisVgsFovFYrFYLBaLxWKx",
    "WCwWi8VisVgsFovFYrFYlmVZlmVZlmVZlmVZlmVZlmVZBrFYLBaLxWKxWCwWi8VisVgsFovFYrFYLBaLxWKxWFwsFovFYrFY",
    "LBaLxWKxWCwWi8VisVgsFgGA+qwQEj/w2e8/GOQFCG7p///RITXwZ0v/O3kEtAcApm43B9ClAxV6IHA3ADQALwDBYDAYDAaD",
    "wWAwGAwGg8FgMBgMBoPBYDAYDAaDwWAwGAwGg8FgMBgMBoPBYDAYDAaDwWAwGAwWZVmWZVmWZVmWZVmWZVmWZVmWZTA4GAwG",
    "g8FgMBgMBoPBYDAYDAaDwWAwGAwGg8FgMBgMBsuyLMuyLMuyLMuyLMuyLMuyLMuyLMuyLMuyLMuyLMuyLMuyLMuyLMuyLMuy",
    "LMsysVgsFovFYrFYLBaLxWKxWFwsFovFYrFYLBaLxWKxWCwWi8VisVgsFovFYlmWZVmWZVmWZQmA+vy7QbbAAZf+/x8dUgOJ",
    "t/T/A2YE9QcApq43B9ClAyHCQOA2AC8ANABlWZZlWZZlWZbBYDAYDAaDwWAwGAwGg8FgMBgMBoPBYDAYDAaDwWAwGAwGg8Fg",
    "MBgMBoPBYAFlWZZlWZZlWS7LsizLsizLsizLsizLsizLsizLsizLsizLsizLsizLsizLsizLMovFYrFYLBaLxWKxWCwWi8Vi",
    "sVgsFovFYrFYLBaLxWKxWJZlWZZlWZZlWZZlWZZlWZZlWQaxWFwsFovFYrFYLBaLxWKxWCwWi8VisVgsFovFYrFYLBaLxWKx",
    "WCwWi8VisVgsFovFYrFYLBYBgPr4Efy/QuAvBmKQBsDI5/39jQ65g0l83t9P1xGQ43Ty",
  ])
  /// `brotli -q 11` of ``text``.
  static let brotliText = fixture([
    "G9ntIgqqT2SkVN0e6dgwVvY4xmArgLzhoYJuADK4eEb/gmGoYajCAUiDw4Pju/DBIZ94rPccedfo/U0plCq1RltHV+8zCoPJ",
    "YnO4eXj1MovBZLE53Dy8elnFYLLYHG4eXr3sYjBZbA43D69eTjGYLDaHm4dXL3cxmCw2h5uHVy9PMZgsNoebh1cvbzGYLDaH",
    "m4dXL18xmCw2h5uHV+8/qjicLrfH28eXr6McTpfb4+3jy9dZDqfL7fH28eXrKofT5fZ4+/jydZfD6XJ7vH18+XrK4XS5Pd4+",
    "vny9y+F0uT3ePr58fcrhdLk93j6+fH3L4XS5Pd4+vnz9yuF0uT3ePr56O6scTpfb4+3jy9dRDqfL7fH28eXrLIfT5fZ4+/jy",
    "dZXD6XJ7vH18+brL4XS5Pd4+vnw95XC63B5vH1++3uVwutwebx9fvj7lcLrcHm8fX76+5XC63B5vH1++fuVwutwebx9fvV1V",
    "DqfL7fH28eXrKIfT5fZ4+/jydZbD6XJ7vH18+brK4XS5Pd4+vnzd5XC63B5vH1++nnI4XW6Pt48vX+9yOF1uj7ePL1+fcjhd",
    "bo+3jy9f33I4XW6Pt48vX79yOF1uj7ePr97uKofT5fZ4+/jydZTD6XJ7vH18+TrL4XS5Pd4+vnxd5XC63B5vH1++7nI4XW6P",
    "t48vX085nC63x9vHl693OZwut8fbx5evTzmcLrfH28eXr285nC63x9vHl69fOZwut8fbx1dvT5XD6XJ7vH18+TrK4XS5Pd4+",
    "vnyd5XC63B5vH1++rnI4XW6Pt48vX3c5nC63x9vHl6+nHE6X2+Pt48vXuxxOl9vj7ePL16ccTpfb4+3jy9e3HE6X2+Pt48vX",
    "rxxOl9vj7eOrt3eVw+lye7x9fPk6yuF0uT3ePr58neVwutwebx9fvq5yOF1uj7ePL193OZwut8fbx5evpxxOl9vj7ePL17sc",
    "Tpfb4+3jy9enHE6X2+Pt48vXtxxOl9vj7ePL168cTpfb4+3jq7dPlcPpcnu8fXz5OsrhdLk93j6+fJ3lcLrcHm8fX76ucjhd",
    "bo+3jy9fdzmcLrfH28eXr6ccTpfb4+3jy9e7HE6X2+Pt48vXpxxOl9vj7ePL17ccTpfb4+3jy9evHE6X2+Pt46u3b5XD6XJ7",
    "vH18+TrK4XS5Pd4+vnyd5XC63B5vH1++rnI4XW6Pt48vX3c5nC63x9vHl6+nHE6X2+Pt48vXuxxOl9vj7ePL16ccTpfb4+3j",
    "y9e3HE6X2+Pt48vXrxxOl9vj7eOrt1+Vw+lye7x9fPk6yuF0uT3ePr58neVwutwebx9fvq5yOF1uj7ePL193OZwut8fbx5ev",
    "pxxOl9vj7ePL17scTpfb4+3jy9enHE6X2+Pt48vXtxxOl9vj7ePL168cTpfb4+3jq3fvgaoCAILAEGgY2H4DCgAEgSHQMLD9",
    "BhYACAJDoGFg+w0qABAEhkDDwPYbXAAgCAyBhoHtN6QAQBAYAg0D22/oAgBBYAg0DGy/YQoABIEh0DCw/YYtABAEhkDDwPYb",
    "rgBAEBgCDQOb74AqABAEhkDDwPYbUAAgCAyBhoHtN7AAQBAYAg0D229QAYAgMAQaBrbf4AIAQWAINAxsvyEFAILAEGgY2H5D",
    "FwAIAkOgYWD7DVMAIAgMgYaB7TdsAYAgMAQaBrbfcAUAgsAQaBjYfAdWAYAgMAQaBrbfgAIAQWAINAxsv4EFAILAEGgY2H6D",
    "CgAEgSHQMLD9BhcACAJDoGFg+w0pABAEhkDDwPYbugBAEBgCDQPbb5gCAEFgCDQMbL9hCwAEgSHQMLD9hisAEASGQMPA5juo",
    "CgAEgSHQMLD9BhQACAJDoGFg+w0sABAEhkDDwPYbVAAgCAyBhoHtN7gAQBAYAg0D229IAYAgMAQaBrbf0AUAgsAQaBjYfsMU",
    "AAgCQ6BhYPsNWwAgCAyBhoHtN1wBgCAwBBoGNt/BVQAgCAyBhoHtN6AAQBAYAg0D229gAYAgMAQaBrbfoAIAQWAINAxsv8EF",
    "AILAEGgY2H5DCgAEgSHQMLD9hi4AEASGQMPA9humAEAQGAINA9tv2AIAQWAINAxsv+EKAASBIdAwsPkOqQIAQWAINAxsvwEF",
    "AILAEGgY2H4DCwAEgSHQMLD9BhUACAJDoGFg+w0uABAEhkDDwPYbUgAgCAyBhoHtN3QBgCAwBBoGtt8wBQCCwBBoGNh+wxYA",
    "CAJDoGFg+w1XACAIDIGGgc136CoAEASGQMPA9htQACAIDIGGge03sABAEBgCDQPbb1ABgCAwBBoGtt/gAgBBYAg0DGy/IQUA",
    "gsAQaBjYfkMXAAgCQ6BhYPsNUwAgCAyBhoHtN2wBgCAwBBoGtt9wBQCCwBBoGNh8h6kCAEFgCDQMbL8BBQCCwBBoGNh+AwsA",
    "BIEh0DCw/QYVAAgCQ6BhYPsNLgAQBIZAw8D2G1IAIAgMgYaB7Td0AYAgMAQaBrbfMAUAgsAQaBjYfsMWAAgCQ6BhYPsNVwAg",
    "CAyBhoHNd9gqABAEhkDDwPYbUAAgCAyBhoHtN7AAQBAYAg0D229QAYAgMAQaBrbf4AIAQWAINAxsvyEFAILAEGgY2H5DFwAI",
    "AkOgYWD7DVMAIAgMgYaB7TdsAYAgMAQaBrbfcAUAgsAQaBjYfIerAgBBYAg0DGy/AQUAgsAQaBjYfgMLAASBIdAwsP0GFQAI",
    "AkOgYWD7DS4AEASGQMPA9htSACAIDIGGge03dAGAIDAEGga23zAFAILAEGgY2H7DFgAIAkOgYWD7DVcAIAgMgYaBDQc=",
  ])
  /// `zstd -19` of 64 MiB of zeros.
  static let zstdBomb = fixture([
    "KLUv/QRoTAAACAABAPz/ORACAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIA",
    "EAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAARAAAAAEA/f/MCxACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQ",
    "AAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAABAACnDyV8",
  ])
  /// `brotli -q 11` of 64 MiB of zeros.
  static let brotliBomb = fixture([
    "y///P/gnAOKxQCD3/o///3/wTwDEYRGA7v0f////4J8AiMMCAN37P/7//8E/ARCHBQC693/8//+DfwIgDgsAdO//+P//B/8E",
    "QBwWAOje//H//w/+CYA4LADQvf/j//8f/BMAcVgAoHv/Nw==",
  ])

  static func fixture(_ base64: [String]) -> Data {
    Data(base64Encoded: base64.joined()) ?? Data()
  }

  /// A server that answers every request with `body` in `coding`, framed by `Content-Length`.
  static func server(_ coding: String, _ body: Data) throws -> HostileServer {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: \(coding)\r\n"
    let reply = Data((head + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n").utf8) + body
    return try HostileServer { _ in .bytes(reply) }
  }

  static func fetcher(_ server: HostileServer) -> SessionFetcher {
    let fetcher = SessionFetcher.fetcher(url: server.url("/coded"))
    fetcher.allowLocalhostRequest = true
    fetcher.callbackQueue = makeCallbackQueue()
    return fetcher
  }

  @Test(arguments: ["br", "zstd"])
  func theBodyArrivesDecoded(_ coding: String) async throws {
    let encoded = coding == "br" ? Self.brotliText : Self.zstdText
    try #require(encoded.count > 1000, "the fixture does not decode from base64")
    let server = try Self.server(coding, encoded)
    defer { server.stop() }
    let fetcher = Self.fetcher(server)
    let result = await fetcher.fetchResult(timeout: 30)
    #expect(result.error == nil, "\(String(describing: result.error))")
    #expect(result.data == Self.text)
    #expect(fetcher.downloadedLength == Int64(Self.text.count))
  }

  @Test(arguments: ["br", "zstd"])
  func aBombEndsAtTheLimitOfDecodedBytes(_ coding: String) async throws {
    let encoded = coding == "br" ? Self.brotliBomb : Self.zstdBomb
    try #require(encoded.count > 50, "the fixture does not decode from base64")
    let server = try Self.server(coding, encoded)
    defer { server.stop() }
    let fetcher = Self.fetcher(server)
    let limit: Int64 = 1 << 20
    fetcher.maximumResponseBodyLength = limit
    let result = await fetcher.fetchResult(timeout: 30)
    #expect(result.fetcherError == .responseTooLarge(limit: limit), "\(String(describing: result.error))")
  }

  @Test(arguments: ["br", "zstd"])
  func aCorruptBodyCannotBeDecoded(_ coding: String) async throws {
    var encoded = coding == "br" ? Self.brotliText : Self.zstdText
    // The middle of the stream overwritten: no decoder can take it for the text.
    let middle = encoded.startIndex + encoded.count / 2
    encoded.replaceSubrange(middle..<middle + 64, with: Data(repeating: 0xFF, count: 64))
    let server = try Self.server(coding, encoded)
    defer { server.stop() }
    let result = await Self.fetcher(server).fetchResult(timeout: 30)
    #expect(result.urlError?.code == .cannotDecodeContentData, "\(String(describing: result.error))")
    #expect(result.data != Self.text)
  }
}
