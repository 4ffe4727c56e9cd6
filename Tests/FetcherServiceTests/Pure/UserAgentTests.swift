import FetcherService
import Foundation
import Testing

@testable import FetcherService

@Suite("User agent strings")
struct UserAgentTests {
  @Test(
    arguments: [
      ("frog in tree/[1.2.3]", "frog_in_tree1.2.3"),
      ("a,b c", "a_b_c"),
      ("plain", "plain"),
      ("x(y)<z>@;:\\\"/[]?={}w", "xyzw"),
      ("tab\there\nnewline", "tabherenewline"),
      ("", ""),
      ("ünïcödé 1.0", "ünïcödé_1.0"),
    ])
  func cleaned(_ input: String, _ expected: String) {
    #expect(FetcherService.cleanedUserAgentString(input) == expected)
  }

  @Test(
    arguments: [
      (nil, nil, "my tool", ("Linux", "6.1.0-18-amd64"), "proc_my_tool/unknown Linux/6.1.0"),
      ("com.example.app", "2.5", "x", ("Linux", "5.15.0"), "com.example.app/2.5 Linux/5.15.0"),
      ("", "", "srv", ("Darwin", "23.4.0"), "proc_srv/unknown Darwin/23.4.0"),
      (nil, "1.0 (beta)", "p", ("Linux", "weird"), "proc_p/1.0_beta Linux/unknown"),
    ] as [(String?, String?, String, (String, String), String)])
  func standard(
    _ bundleID: String?, _ version: String?, _ process: String, _ system: (String, String), _ expected: String
  ) {
    let agent = StandardUserAgent.make(
      bundleIdentifier: bundleID, bundleVersion: version, processName: process,
      system: (name: system.0, release: system.1))
    #expect(agent == expected)
  }

  @Test func standardUserAgentOfThisProcessHasTheOriginalShape() throws {
    let agent = FetcherService.standardUserAgent
    let pattern = try Regex("^[^ /]+/[0-9.a-z]+ [^ /]+/[0-9.]+$")
    #expect(agent.wholeMatch(of: pattern) != nil, "\(agent)")
    #expect(agent.hasPrefix("proc_") || Bundle.main.bundleIdentifier != nil)
  }
}
