import Foundation
import Testing

@testable import SessionFetcher

/// The Public Suffix List decisions: which `Domain` attributes a host may set, and the site a host
/// belongs to, with the system's libpsl and with the built-in list used when libpsl is missing.
@Suite("Public Suffix List for cookies")
struct PublicSuffixListTests {
  /// Which list a table runs against.
  enum List: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case libpsl
    case builtIn

    var testDescription: String { rawValue }

    /// The list; nil when libpsl is not loaded.
    var list: PublicSuffixList? {
      switch self {
      case .libpsl: return PublicSuffixList.libpsl
      case .builtIn: return PublicSuffixList.builtIn
      }
    }
  }

  enum Outcome: Sendable {
    case rejected
    /// Accepted as a host-only cookie for the request host.
    case hostOnly
    /// Accepted as a domain cookie for the Domain attribute.
    case domainCookie
  }

  struct DomainCase: Sendable, CustomTestStringConvertible {
    var url: String
    /// The Domain attribute; nil for none.
    var domain: String?
    var outcome: Outcome

    init(_ url: String, _ domain: String?, _ outcome: Outcome) {
      self.url = url
      self.domain = domain
      self.outcome = outcome
    }

    var testDescription: String { "Domain=\(domain ?? "(none)") from \(url)" }
  }

  /// Cases both lists must decide alike: the built-in list carries these suffixes too.
  static let commonCases: [DomainCase] = [
    // Private suffixes: a bucket, a shop or a dynamic-DNS name cannot scope cookies to its siblings.
    DomainCase("https://b1.s3.amazonaws.com/", "amazonaws.com", .rejected),
    DomainCase("https://b1.s3.amazonaws.com/", "s3.amazonaws.com", .rejected),
    DomainCase("https://b1.s3.amazonaws.com/", "b1.s3.amazonaws.com", .domainCookie),
    DomainCase("https://shop.myshopify.com/", "myshopify.com", .rejected),
    DomainCase("https://a.shop.myshopify.com/", "shop.myshopify.com", .domainCookie),
    DomainCase("https://me.duckdns.org/", "duckdns.org", .rejected),
    DomainCase("https://someone.github.io/", "github.io", .rejected),
    DomainCase("https://x.herokuapp.com/", "herokuapp.com", .rejected),
    // ICANN suffixes of two and three labels.
    DomainCase("https://www.example.com.es/", "com.es", .rejected),
    DomainCase("https://www.example.com.es/", "example.com.es", .domainCookie),
    DomainCase("https://school.k12.ca.us/", "k12.ca.us", .rejected),
    DomainCase("https://school.k12.ca.us/", "ca.us", .rejected),
    DomainCase("https://www.example.co.uk/", "co.uk", .rejected),
    DomainCase("https://www.example.co.uk/", "example.co.uk", .domainCookie),
    DomainCase("https://www.example.com/", "com", .rejected),
    // Ordinary sites are unaffected.
    DomainCase("https://www.example.com/", "example.com", .domainCookie),
    DomainCase("https://www.example.com/", ".example.com", .domainCookie),
    DomainCase("https://www.example.com/", "www.example.com", .domainCookie),
    DomainCase("https://a.b.example.com/", "b.example.com", .domainCookie),
    DomainCase("https://www.example.com/", "other.com", .rejected),
    // A host that is itself a suffix may set a host-only cookie, with or without Domain, and no other
    // (RFC 6265 §5.3 step 5).
    DomainCase("https://myshopify.com/", nil, .hostOnly),
    DomainCase("https://myshopify.com/", "myshopify.com", .hostOnly),
    DomainCase("https://s3.amazonaws.com/", "s3.amazonaws.com", .hostOnly),
    DomainCase("https://s3.amazonaws.com/", "amazonaws.com", .rejected),
    DomainCase("https://co.uk/", "co.uk", .hostOnly),
    DomainCase("http://localhost/", "localhost", .hostOnly),
    DomainCase("http://app.localhost/", "localhost", .rejected),
    DomainCase("http://127.0.0.1/", "127.0.0.1", .hostOnly),
    DomainCase("http://127.0.0.1/", "0.0.1", .rejected),
  ]

  /// Cases only the full list gets right: wildcard and exception rules, rarer entries, IDN
  /// suffixes. The built-in list is the full list too.
  static let fullListCases: [DomainCase] = [
    DomainCase("https://a.b.ck/", "b.ck", .rejected),  // *.ck
    DomainCase("https://a.www.ck/", "www.ck", .domainCookie),  // !www.ck
    DomainCase("https://a.b.kawasaki.jp/", "b.kawasaki.jp", .rejected),  // *.kawasaki.jp
    DomainCase("https://a.city.kawasaki.jp/", "city.kawasaki.jp", .domainCookie),  // !city.kawasaki.jp
    DomainCase("https://me.dyndns.org/", "dyndns.org", .rejected),
    DomainCase("https://x.blogspot.co.uk/", "blogspot.co.uk", .rejected),
    DomainCase("https://www.example.xn--p1ai/", "xn--p1ai", .rejected),
    DomainCase("https://www.example.xn--p1ai/", "example.xn--p1ai", .domainCookie),
    DomainCase("https://a.example.internal/", "example.internal", .domainCookie),
    DomainCase("https://a.example.internal/", "internal", .rejected),
  ]

  private func check(_ testCase: DomainCase, with list: PublicSuffixList) throws {
    let header = "a=b" + (testCase.domain.map { "; Domain=\($0)" } ?? "")
    let url = cookieURL(testCase.url)
    let cookie = SetCookieParser.parse(header, from: url, now: Date(), publicSuffixes: list)
    let host = try #require(CookieRules.canonicalHost(of: url))
    switch testCase.outcome {
    case .rejected:
      #expect(cookie == nil, "\(testCase.testDescription) with the \(list.source)")
    case .hostOnly:
      #expect(cookie?.isHostOnly == true && cookie?.domain == host, "\(testCase.testDescription)")
    case .domainCookie:
      let expected = CookieRules.canonicalDomain(testCase.domain ?? "")
      #expect(cookie?.isHostOnly == false && cookie?.domain == expected, "\(testCase.testDescription)")
    }
  }

  @Test(
    "Domain attributes, decided alike by libpsl and the built-in list", arguments: List.allCases, commonCases)
  func commonDomainDecisions(list: List, testCase: DomainCase) throws {
    // Without libpsl only the built-in rows run; libpslLoadsOnLinux reports the missing library.
    guard let suffixes = list.list else { return }
    try check(testCase, with: suffixes)
  }

  @Test("Domain attributes that need the full list", arguments: List.allCases, fullListCases)
  func fullListDomainDecisions(list: List, testCase: DomainCase) throws {
    guard let suffixes = list.list else { return }
    try check(testCase, with: suffixes)
  }

  /// The list's algorithm on a small list of its own: the rule with the most labels prevails, an
  /// exception over a wildcard, a wildcard matches one label, and an unlisted name's suffix is its
  /// last label.
  @Test(
    arguments: [
      ("com", "com", nil), ("example.com", "com", "example.com"), ("a.b.example.com", "com", "example.com"),
      ("www.example.co.uk", "co.uk", "example.co.uk"), ("co.uk", "co.uk", nil), ("uk", "uk", nil),
      ("a.b.ck", "b.ck", "a.b.ck"), ("b.ck", "b.ck", nil), ("ck", "ck", nil),
      ("www.ck", "ck", "www.ck"), ("a.www.ck", "ck", "www.ck"),
      ("x.city.kawasaki.jp", "kawasaki.jp", "city.kawasaki.jp"),
      ("q.y.kawasaki.jp", "y.kawasaki.jp", "q.y.kawasaki.jp"),
      ("localhost", "localhost", nil), ("a.example.internal", "internal", "example.internal"),
      ("b1.s3.amazonaws.com", "s3.amazonaws.com", "b1.s3.amazonaws.com"),
    ] as [(String, String, String?)])
  func rulesFollowTheListsAlgorithm(host: String, suffix: String, registrable: String?) {
    let rules = PublicSuffixRules(
      text: """
        // a comment
        com
        uk
        co.uk
        *.ck
        !www.ck
        jp
        *.kawasaki.jp
        !city.kawasaki.jp
        s3.amazonaws.com

        """)
    #expect(rules.publicSuffix(of: host) == suffix)
    #expect(rules.registrableDomain(host) == registrable)
    #expect(rules.isPublicSuffix(host) == (registrable == nil))
  }

  /// The built-in list and libpsl (reading Debian's copy of the same list) answer alike for every
  /// rule of the list: the rule's own name, a name one label below it, and one two labels below
  /// (a wildcard's `*` and an exception's `!` made into labels).
  @Test(.enabled(if: PublicSuffixList.libpsl != nil))
  func theBuiltInListAgreesWithLibpsl() throws {
    let libpsl = try #require(PublicSuffixList.libpsl)
    let rules = PublicSuffixRules.list
    var names: Set<String> = []
    for rule in rules.rules.union(rules.exceptions).union(rules.wildcards.map { "w." + $0 }) {
      names.formUnion([rule, "x." + rule, "y.x." + rule])
    }
    // libpsl takes names as UTF-8 and its own tables in the list's Unicode form: compare the ASCII
    // names, whose rules the generator also wrote in punycode.
    let asciiNames = names.filter { $0.allSatisfy(\.isASCII) }
    #expect(asciiNames.count > 25_000)
    var disagreements: [String] = []
    for name in asciiNames.sorted() {
      let ours = (
        PublicSuffixList.builtIn.isPublicSuffix(name), PublicSuffixList.builtIn.registrableDomain(name)
      )
      let theirs = (libpsl.isPublicSuffix(name), libpsl.registrableDomain(name))
      if ours != theirs { disagreements.append("\(name): \(ours) vs libpsl \(theirs)") }
    }
    #expect(disagreements.isEmpty, "\(disagreements.count): \(disagreements.prefix(20))")
  }

  @Test("the default list is libpsl when it loads, else the built-in one")
  func libpslIsUsedWhenItLoads() {
    if let libpsl = PublicSuffixList.libpsl {
      #expect(PublicSuffixList.current.source == libpsl.source)
      #expect(libpsl.source.hasPrefix("libpsl "))
      #expect(PublicSuffixList.libpslUnavailableReason == nil)
    } else {
      #expect(PublicSuffixList.current.source == PublicSuffixList.builtIn.source)
      #expect(PublicSuffixList.libpslUnavailableReason != nil)
    }
    #expect(SetCookieParser.publicSuffixListSource == PublicSuffixList.current.source)
  }

  #if os(Linux)
    @Test("libpsl loads on Linux, where libcurl depends on it")
    func libpslLoadsOnLinux() {
      #expect(PublicSuffixList.libpsl != nil, "\(PublicSuffixList.libpslUnavailableReason ?? "")")
    }
  #endif

  static let siteCases: [(host: String, site: String)] = [
    ("example.com", "example.com"), ("a.b.example.com", "example.com"),
    ("www.example.co.uk", "example.co.uk"), ("x.someone.github.io", "someone.github.io"),
    ("b1.s3.amazonaws.com", "b1.s3.amazonaws.com"), ("a.shop.myshopify.com", "shop.myshopify.com"),
    ("www.example.com.es", "example.com.es"), ("a.school.k12.ca.us", "school.k12.ca.us"),
    // A suffix, a single label or an IP address is its own site.
    ("myshopify.com", "myshopify.com"), ("localhost", "localhost"), ("127.0.0.1", "127.0.0.1"),
    ("::1", "::1"),
  ]

  @Test("registrable domain", arguments: List.allCases, siteCases)
  func registrableDomain(list: List, siteCase: (host: String, site: String)) {
    guard let suffixes = list.list else { return }
    #expect(CookieRules.registrableDomain(of: siteCase.host, in: suffixes) == siteCase.site)
  }

  @Test("libpsl: a name with a NUL is not cut short at the NUL", .enabled(if: PublicSuffixList.libpsl != nil))
  func nulIsNotATerminator() throws {
    let libpsl = try #require(PublicSuffixList.libpsl)
    // Read as C strings these would be "example.com", no suffix and a site of its own.
    #expect(libpsl.isPublicSuffix("example.com\u{0}.evil"))
    #expect(libpsl.registrableDomain("www.example.com\u{0}.evil") == nil)
  }

  @Test("the jar decides with the list it was given (the fallback when libpsl is missing)")
  func jarUsesTheInjectedList() {
    let url = cookieURL("https://b1.s3.amazonaws.com/")
    let headers = ["up=1; Domain=amazonaws.com", "bucket=1; Domain=s3.amazonaws.com", "own=1"]
    let fallback = SessionCookieStorage(now: { Date() }, publicSuffixes: .builtIn)
    fallback.handleSetCookieHeaders(headers, for: url)
    #expect(fallback.cookies.map(\.name) == ["own"])

    // A list that calls every name a suffix: even a plain site's Domain cookie is refused, which
    // shows the jar asks the list it was given and not the process-wide one.
    let everythingIsASuffix = PublicSuffixList(
      isPublicSuffix: { _ in true }, registrableDomain: { _ in nil }, source: "test")
    let strict = SessionCookieStorage(now: { Date() }, publicSuffixes: everythingIsASuffix)
    strict.handleSetCookieHeaders(
      ["site=1; Domain=example.com", "host=1"], for: cookieURL("https://www.example.com/"))
    #expect(strict.cookies.map(\.name) == ["host"])
    let normal = SessionCookieStorage(now: { Date() }, publicSuffixes: .builtIn)
    normal.handleSetCookieHeaders(
      ["site=1; Domain=example.com", "host=1"], for: cookieURL("https://www.example.com/"))
    #expect(Set(normal.cookies.map(\.name)) == ["site", "host"])
  }

  @Test("the per-site bound counts sites by the list: two buckets under s3.amazonaws.com are two sites")
  func perSiteBoundFollowsTheList() {
    for list in List.allCases.compactMap(\.list) {
      let jar = SessionCookieStorage(now: { Date() }, publicSuffixes: list)
      jar.maximumCookiesPerSite = 2
      jar.handleSetCookieHeaders(["a=1", "b=1"], for: cookieURL("https://b1.s3.amazonaws.com/"))
      jar.handleSetCookieHeaders(["c=1", "d=1"], for: cookieURL("https://b2.s3.amazonaws.com/"))
      #expect(jar.cookies.count == 4, "\(list.source)")
    }
  }
}
