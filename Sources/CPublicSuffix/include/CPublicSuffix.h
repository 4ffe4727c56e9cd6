// CPublicSuffix: the cookie jar's bridge to libpsl (libpsl.so.5), the Public Suffix List library
// that libcurl itself uses.
//
// No libpsl header is included (a machine with only the Swift toolchain has none): the few
// prototypes used are declared in CPublicSuffix.c, copied from libpsl's public header
// (include/libpsl.h), whose ABI is stable since 0.x soname 5.
//
// libpsl is opened with dlopen at the first call of cpsl_load(), never linked, and its list is
// chosen once: psl_latest(NULL) (the newer of the list built into libpsl and the distribution's
// file, /usr/share/publicsuffix), else psl_builtin(). All functions may be called from any thread;
// the list is never freed or changed after loading.

#ifndef CPUBLICSUFFIX_H
#define CPUBLICSUFFIX_H

#ifdef __cplusplus
extern "C" {
#endif

/// Loads libpsl and its list once per process. Returns 0 when the list can be used, -1 otherwise
/// (then cpsl_unavailable_reason() says why). Later calls return the first call's answer.
int cpsl_load(void);

/// Why libpsl cannot be used (missing library or symbol, no list), or NULL when it can. A static
/// string.
const char *cpsl_unavailable_reason(void);

/// libpsl's version text, such as "0.21.2 (+libidn2/2.3.3)", or NULL when unavailable.
const char *cpsl_version(void);

/// 1 when `domain` (lowercase, UTF-8 or punycode, no trailing dot) is a public suffix with cookie
/// semantics: ICANN and private rules, and the implicit "*" rule (so an unlisted top-level label
/// is a suffix). 0 when it is not. -1 when libpsl is not loaded.
int cpsl_is_public_suffix(const char *domain);

/// The registrable domain of `domain` (the public suffix plus one label): a pointer into `domain`,
/// or NULL when `domain` is itself a public suffix or libpsl is not loaded.
const char *cpsl_registrable_domain(const char *domain);

#ifdef __cplusplus
}
#endif

#endif
