// The `main` of every fuzzer in this package: it runs libFuzzer's driver on the executable's
// `LLVMFuzzerTestOneInput`. SwiftPM renames an executable's entry point to `<Module>_main`, which a
// module without top-level code never defines, so Package.swift aliases `main` and `<Module>_main`
// to `swiftpm_fuzzer_main` at link time.

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
  _ argc: UnsafeMutablePointer<CInt>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
  _ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@_silgen_name("LLVMFuzzerTestOneInput")
private func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt

/// The process entry point of a fuzzer executable.
@_cdecl("swiftpm_fuzzer_main")
public func swiftPMFuzzerMain(
  _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> CInt {
  var argc = argc
  var argv = argv
  return runFuzzerDriver(&argc, &argv) { fuzzerTestOneInput($0, $1) }
}
