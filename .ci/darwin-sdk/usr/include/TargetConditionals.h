// Stand-in for the SDK's TargetConditionals.h (see ../../README.md): the platform macros from the
// target triple, as clang reports it.
#ifndef TARGETCONDITIONALS_STANDIN_H
#define TARGETCONDITIONALS_STANDIN_H
#if defined(__ENVIRONMENT_MAC_OS_X_VERSION_MIN_REQUIRED__)
#define TARGET_OS_OSX 1
#define TARGET_OS_IPHONE 0
#else
#define TARGET_OS_OSX 0
#define TARGET_OS_IPHONE 1
#endif
#define TARGET_OS_MAC 1
#endif
