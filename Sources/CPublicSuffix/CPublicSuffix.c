// CPublicSuffix: loads libpsl.so.5 at run time and forwards to it. See include/CPublicSuffix.h.

#include "CPublicSuffix.h"

#if defined(__linux__)

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>

// libpsl's prototypes (libpsl.h). psl_ctx_t is opaque.
typedef struct psl_ctx_st psl_ctx_t;
typedef psl_ctx_t *(*psl_latest_fn)(const char *fname);
typedef const psl_ctx_t *(*psl_builtin_fn)(void);
typedef int (*psl_is_public_suffix2_fn)(const psl_ctx_t *psl, const char *domain, int type);
typedef const char *(*psl_registrable_domain_fn)(const psl_ctx_t *psl, const char *domain);
typedef const char *(*psl_get_version_fn)(void);

// PSL_TYPE_ANY (PSL_TYPE_ICANN | PSL_TYPE_PRIVATE): private rules such as s3.amazonaws.com count,
// as they must for cookies.
#define CPSL_TYPE_ANY 3

static struct {
  psl_is_public_suffix2_fn is_public_suffix2;
  psl_registrable_domain_fn registrable_domain;
  const psl_ctx_t *context;
} psl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_result = -1;
static char reason_buffer[512];
static const char *unavailable_reason = "libpsl was not loaded";
static const char *loaded_version = NULL;

static void fail(const char *message) {
  snprintf(reason_buffer, sizeof reason_buffer, "%s", message);
  unavailable_reason = reason_buffer;
  load_result = -1;
}

static void load(void) {
  const char *path = "libpsl.so.5";
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *error = dlerror();
    char message[480];
    snprintf(message, sizeof message, "%s could not be loaded: %s", path, error ? error : "unknown error");
    fail(message);
    return;
  }
  psl.is_public_suffix2 = (psl_is_public_suffix2_fn)dlsym(library, "psl_is_public_suffix2");
  psl.registrable_domain = (psl_registrable_domain_fn)dlsym(library, "psl_registrable_domain");
  if (psl.is_public_suffix2 == NULL || psl.registrable_domain == NULL) {
    fail("libpsl.so.5 lacks psl_is_public_suffix2 or psl_registrable_domain (libpsl 0.13 or later is needed)");
    return;
  }
  // psl_latest (0.16): the newer of the built-in list and the distribution's file; kept for the
  // life of the process. psl_builtin: the list compiled into libpsl, NULL when there is none.
  psl_latest_fn latest = (psl_latest_fn)dlsym(library, "psl_latest");
  psl_builtin_fn builtin = (psl_builtin_fn)dlsym(library, "psl_builtin");
  const psl_ctx_t *context = latest != NULL ? latest(NULL) : NULL;
  if (context == NULL && builtin != NULL) {
    context = builtin();
  }
  if (context == NULL) {
    fail("libpsl.so.5 has no built-in list and no list file could be read");
    return;
  }
  psl.context = context;
  psl_get_version_fn get_version = (psl_get_version_fn)dlsym(library, "psl_get_version");
  loaded_version = get_version != NULL ? get_version() : NULL;
  unavailable_reason = NULL;
  load_result = 0;
}

int cpsl_load(void) {
  pthread_once(&load_once, load);
  return load_result;
}

const char *cpsl_unavailable_reason(void) {
  cpsl_load();
  return unavailable_reason;
}

const char *cpsl_version(void) {
  cpsl_load();
  return loaded_version;
}

int cpsl_is_public_suffix(const char *domain) {
  if (cpsl_load() != 0) {
    return -1;
  }
  return psl.is_public_suffix2(psl.context, domain, CPSL_TYPE_ANY) ? 1 : 0;
}

const char *cpsl_registrable_domain(const char *domain) {
  if (cpsl_load() != 0) {
    return NULL;
  }
  return psl.registrable_domain(psl.context, domain);
}

#else  // not Linux: no libpsl; the cookie jar uses its built-in list.

int cpsl_load(void) { return -1; }
const char *cpsl_unavailable_reason(void) { return "libpsl is only loaded on Linux"; }
const char *cpsl_version(void) { return 0; }
int cpsl_is_public_suffix(const char *domain) {
  (void)domain;
  return -1;
}
const char *cpsl_registrable_domain(const char *domain) {
  (void)domain;
  return 0;
}

#endif
