// Every FoundationNetworking import of the module goes through this file's pattern:
// the types live in FoundationNetworking on Linux and in Foundation on Apple platforms.
import Foundation

#if canImport(FoundationNetworking)
  @_exported import FoundationNetworking
#endif
