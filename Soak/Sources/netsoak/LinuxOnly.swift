// Soak/ runs on Linux only: it reads /proc, uses glibc and network namespaces (unshare), and
// measures FoundationNetworking. Build the root package on Apple platforms; this one says so here.
#if !os(Linux)
  #error("Soak/ (netsoak) runs on Linux only: it reads /proc and uses glibc")
#endif
