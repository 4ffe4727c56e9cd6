// The module's one FoundationNetworking import: the URL loading types live in FoundationNetworking
// on Linux and in Foundation on Apple platforms. Re-exported, it serves every file of the module
// (which imports it nowhere else) and every module that imports SessionFetcher.
import Foundation

#if canImport(FoundationNetworking)
  @_exported import FoundationNetworking
#endif
