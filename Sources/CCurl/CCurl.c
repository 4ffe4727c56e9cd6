// CCurl: loads libcurl at run time and forwards to it. See include/CCurl.h.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE  // pthread_setname_np, memfd_create
#endif

#include "CCurl.h"

#if defined(__APPLE__)
#include <TargetConditionals.h>
#endif

// The libcurl loaded when SESSIONFETCHER_LIBCURL_PATH names none: on Linux the libcurl.so.4
// FoundationNetworking runs on; on macOS the one the system ships (in the shared cache since macOS
// 11, so dlopen finds it though no file is at that path). iOS, tvOS, watchOS and visionOS ship no
// libcurl an app may load: there the engine is unavailable (the last branch of this file).
#if defined(__linux__)
#define CCURL_DEFAULT_LIBRARY "libcurl.so.4"
#elif defined(__APPLE__) && TARGET_OS_OSX
#define CCURL_DEFAULT_LIBRARY "/usr/lib/libcurl.4.dylib"
#endif

#if defined(CCURL_DEFAULT_LIBRARY)

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The first fields of curl_version_info_data (curl.h), the only ones read.
struct ccurl_version_info_prefix {
  int age;
  const char *version;
  unsigned int version_num;
};

// CURLMsg (multi.h).
struct ccurl_msg {
  int msg;
  CURL *easy_handle;
  union {
    void *whatever;
    int result;
  } data;
};

// libcurl's prototypes. The variadic ones (setopt, getinfo) are called with exactly one argument
// of the type the option documents, as C callers of libcurl do.
typedef int (*global_init_fn)(long flags);
typedef struct ccurl_version_info_prefix *(*version_info_fn)(int age);
typedef CURL *(*easy_init_fn)(void);
typedef void (*easy_cleanup_fn)(CURL *);
typedef void (*easy_reset_fn)(CURL *);
typedef int (*easy_setopt_fn)(CURL *, int, ...);
typedef int (*easy_getinfo_fn)(CURL *, int, ...);
typedef int (*easy_pause_fn)(CURL *, int);
typedef const char *(*easy_strerror_fn)(int);
typedef CURLM *(*multi_init_fn)(void);
typedef int (*multi_cleanup_fn)(CURLM *);
typedef int (*multi_setopt_fn)(CURLM *, int, ...);
typedef int (*multi_handle_fn)(CURLM *, CURL *);
typedef int (*multi_perform_fn)(CURLM *, int *);
typedef int (*multi_poll_fn)(CURLM *, void *extra_fds, unsigned int extra_nfds, int timeout_ms, int *ret);
typedef int (*multi_wakeup_fn)(CURLM *);
typedef struct ccurl_msg *(*multi_info_read_fn)(CURLM *, int *);
typedef struct curl_slist *(*slist_append_fn)(struct curl_slist *, const char *);
typedef void (*slist_free_all_fn)(struct curl_slist *);

static struct {
  global_init_fn global_init;
  version_info_fn version_info;
  easy_init_fn easy_init;
  easy_cleanup_fn easy_cleanup;
  easy_reset_fn easy_reset;
  easy_setopt_fn easy_setopt;
  easy_getinfo_fn easy_getinfo;
  easy_pause_fn easy_pause;
  easy_strerror_fn easy_strerror;
  multi_init_fn multi_init;
  multi_cleanup_fn multi_cleanup;
  multi_setopt_fn multi_setopt;
  multi_handle_fn multi_add_handle;
  multi_handle_fn multi_remove_handle;
  multi_perform_fn multi_perform;
  multi_poll_fn multi_poll;
  multi_wakeup_fn multi_wakeup;
  multi_info_read_fn multi_info_read;
  slist_append_fn slist_append;
  slist_free_all_fn slist_free_all;
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_result = -1;
static char reason_buffer[512];
static const char *unavailable_reason = NULL;
static const char *loaded_version = NULL;
static unsigned int loaded_version_number = 0;

// 7.68.0: the first libcurl with curl_multi_wakeup.
#define CCURL_MINIMUM_VERSION 0x074400
// CURL_GLOBAL_ALL (CURL_GLOBAL_SSL | CURL_GLOBAL_WIN32).
#define CCURL_GLOBAL_ALL 3
// CURLVERSION_FOURTH: any age works for the three fields read; 3 exists since 7.16.1.
#define CCURL_VERSION_AGE 3

static void fail(const char *format, const char *detail) {
  snprintf(reason_buffer, sizeof reason_buffer, format, detail);
  unavailable_reason = reason_buffer;
  load_result = -1;
}

static int resolve(void *library, const char *path, void **slot, const char *name) {
  *slot = dlsym(library, name);
  if (*slot == NULL) {
    char message[400];
    snprintf(message, sizeof message, "%s has no symbol %s: the libcurl engine needs libcurl 7.68.0 or later",
             path, name);
    fail("%s", message);
    return -1;
  }
  return 0;
}

static void load(void) {
  const char *override = getenv("SESSIONFETCHER_LIBCURL_PATH");
  const char *path = (override != NULL && override[0] != '\0') ? override : CCURL_DEFAULT_LIBRARY;
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *error = dlerror();
    char message[400];
    snprintf(message, sizeof message, "%s could not be loaded: %s", path, error ? error : "unknown error");
    fail("%s", message);
    return;
  }
#define RESOLVE(field, name)                                \
  if (resolve(library, path, (void **)&curl.field, name) != 0) { \
    return;                                                 \
  }
  RESOLVE(global_init, "curl_global_init")
  RESOLVE(version_info, "curl_version_info")
  RESOLVE(easy_init, "curl_easy_init")
  RESOLVE(easy_cleanup, "curl_easy_cleanup")
  RESOLVE(easy_reset, "curl_easy_reset")
  RESOLVE(easy_setopt, "curl_easy_setopt")
  RESOLVE(easy_getinfo, "curl_easy_getinfo")
  RESOLVE(easy_pause, "curl_easy_pause")
  RESOLVE(easy_strerror, "curl_easy_strerror")
  RESOLVE(multi_init, "curl_multi_init")
  RESOLVE(multi_cleanup, "curl_multi_cleanup")
  RESOLVE(multi_setopt, "curl_multi_setopt")
  RESOLVE(multi_add_handle, "curl_multi_add_handle")
  RESOLVE(multi_remove_handle, "curl_multi_remove_handle")
  RESOLVE(multi_perform, "curl_multi_perform")
  RESOLVE(multi_poll, "curl_multi_poll")
  RESOLVE(multi_wakeup, "curl_multi_wakeup")
  RESOLVE(multi_info_read, "curl_multi_info_read")
  RESOLVE(slist_append, "curl_slist_append")
  RESOLVE(slist_free_all, "curl_slist_free_all")
#undef RESOLVE
  struct ccurl_version_info_prefix *info = curl.version_info(CCURL_VERSION_AGE);
  if (info == NULL || info->version == NULL) {
    fail("%s did not report its version", path);
    return;
  }
  if (info->version_num < CCURL_MINIMUM_VERSION) {
    fail("libcurl %s is too old: the libcurl engine needs 7.68.0 or later", info->version);
    return;
  }
  // FoundationNetworking may have initialized libcurl already; the calls are counted, and this one
  // is never undone (the library stays loaded for the life of the process).
  int code = curl.global_init(CCURL_GLOBAL_ALL);
  if (code != CCURLE_OK) {
    char number[16];
    snprintf(number, sizeof number, "%d", code);
    fail("curl_global_init failed with CURLcode %s", number);
    return;
  }
  loaded_version = info->version;
  loaded_version_number = info->version_num;
  unavailable_reason = NULL;
  load_result = 0;
}

int ccurl_load(void) {
  pthread_once(&load_once, load);
  return load_result;
}

const char *ccurl_unavailable_reason(void) { return unavailable_reason; }
const char *ccurl_version(void) { return loaded_version; }
unsigned int ccurl_version_number(void) { return loaded_version_number; }

int ccurl_block_sigpipe_on_this_thread(void) {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  return pthread_sigmask(SIG_BLOCK, &pipe_only, NULL);
}

void ccurl_set_thread_name(const char *name) {
  char truncated[16];
  snprintf(truncated, sizeof truncated, "%s", name);
#if defined(__APPLE__)
  pthread_setname_np(truncated);  // Darwin names the calling thread only
#else
  pthread_setname_np(pthread_self(), truncated);
#endif
}

CURL *ccurl_easy_init(void) { return curl.easy_init(); }
void ccurl_easy_cleanup(CURL *easy) { curl.easy_cleanup(easy); }
void ccurl_easy_reset(CURL *easy) { curl.easy_reset(easy); }
int ccurl_easy_setopt_long(CURL *easy, int option, long value) { return curl.easy_setopt(easy, option, value); }
int ccurl_easy_setopt_ptr(CURL *easy, int option, void *value) { return curl.easy_setopt(easy, option, value); }
int ccurl_easy_setopt_off(CURL *easy, int option, ccurl_off_t value) {
  return curl.easy_setopt(easy, option, value);
}
// libcurl's struct curl_blob (7.71.0); CURL_BLOB_COPY makes libcurl keep its own copy.
struct ccurl_blob {
  void *data;
  size_t len;
  unsigned int flags;
};
int ccurl_easy_setopt_blob(CURL *easy, int option, const void *data, size_t length) {
  struct ccurl_blob blob = {(void *)data, length, 1 /* CURL_BLOB_COPY */};
  return curl.easy_setopt(easy, option, &blob);
}
int ccurl_easy_setopt_slist(CURL *easy, int option, struct curl_slist *list) {
  return curl.easy_setopt(easy, option, list);
}
int ccurl_easy_setopt_write_function(CURL *easy, int option, ccurl_write_callback callback) {
  return curl.easy_setopt(easy, option, callback);
}
int ccurl_easy_setopt_read_function(CURL *easy, int option, ccurl_read_callback callback) {
  return curl.easy_setopt(easy, option, callback);
}
int ccurl_easy_setopt_seek_function(CURL *easy, int option, ccurl_seek_callback callback) {
  return curl.easy_setopt(easy, option, callback);
}
int ccurl_easy_setopt_xferinfo_function(CURL *easy, int option, ccurl_xferinfo_callback callback) {
  return curl.easy_setopt(easy, option, callback);
}
int ccurl_easy_getinfo_long(CURL *easy, int info, long *value) { return curl.easy_getinfo(easy, info, value); }
int ccurl_easy_getinfo_off(CURL *easy, int info, ccurl_off_t *value) {
  return curl.easy_getinfo(easy, info, value);
}
int ccurl_easy_getinfo_ptr(CURL *easy, int info, void **value) {
  char *pointer = NULL;
  int code = curl.easy_getinfo(easy, info, &pointer);
  *value = pointer;
  return code;
}
int ccurl_easy_getinfo_string(CURL *easy, int info, const char **value) {
  char *string = NULL;
  int code = curl.easy_getinfo(easy, info, &string);
  *value = string;
  return code;
}
int ccurl_easy_pause(CURL *easy, int bitmask) { return curl.easy_pause(easy, bitmask); }
const char *ccurl_easy_strerror(int code) {
  if (load_result != 0) return "libcurl is not loaded";
  return curl.easy_strerror(code);
}

CURLM *ccurl_multi_init(void) { return curl.multi_init(); }
int ccurl_multi_cleanup(CURLM *multi) { return curl.multi_cleanup(multi); }
int ccurl_multi_setopt_long(CURLM *multi, int option, long value) { return curl.multi_setopt(multi, option, value); }
int ccurl_multi_add_handle(CURLM *multi, CURL *easy) { return curl.multi_add_handle(multi, easy); }
int ccurl_multi_remove_handle(CURLM *multi, CURL *easy) { return curl.multi_remove_handle(multi, easy); }
int ccurl_multi_perform(CURLM *multi, int *running_handles) { return curl.multi_perform(multi, running_handles); }
int ccurl_multi_poll(CURLM *multi, int timeout_ms, int *numfds) {
  return curl.multi_poll(multi, NULL, 0, timeout_ms, numfds);
}
int ccurl_multi_wakeup(CURLM *multi) { return curl.multi_wakeup(multi); }
int ccurl_multi_info_read(CURLM *multi, CURL **easy, int *result, int *messages_left) {
  struct ccurl_msg *message = curl.multi_info_read(multi, messages_left);
  if (message == NULL) {
    *easy = NULL;
    *result = 0;
    return CCURLMSG_NONE;
  }
  *easy = message->easy_handle;
  *result = message->msg == CCURLMSG_DONE ? message->data.result : 0;
  return message->msg;
}

struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *string) {
  return curl.slist_append(list, string);
}
void ccurl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

#endif  // CCURL_DEFAULT_LIBRARY

#if defined(__linux__)

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

// MARK: - Header gate

struct ccurl_header_gate {
  ccurl_write_callback original;
  void *original_data;
  // The lines of the head being received, each stored as its length (a size_t) then its bytes.
  char *held;
  size_t held_length;
  size_t held_capacity;
  size_t dropped_lines;
  // Set when a head was refused for its framing (see content_lengths_disagree).
  int refused_framing;
};

// Where an easy handle keeps CURLOPT_HEADERFUNCTION and CURLOPT_HEADERDATA, in bytes from its
// start, or -1 when they could not be found.
static long header_function_offset = -1;
static long header_data_offset = -1;
static pthread_once_t header_offsets_once = PTHREAD_ONCE_INIT;

// Distinct functions (distinct results keep a linker from folding them into one).
static size_t offset_probe_first(char *buffer, size_t size, size_t nitems, void *userdata) {
  (void)buffer; (void)size; (void)nitems; (void)userdata;
  return 1;
}
static size_t offset_probe_second(char *buffer, size_t size, size_t nitems, void *userdata) {
  (void)buffer; (void)size; (void)nitems; (void)userdata;
  return 2;
}
static char offset_probe_data;

// The offset of the only pointer-aligned word equal to value in the first `size` bytes of handle,
// or -1 when there is none or more than one.
static long find_word(const char *handle, size_t size, uintptr_t value) {
  long found = -1;
  for (size_t offset = 0; offset + sizeof(uintptr_t) <= size; offset += sizeof(uintptr_t)) {
    uintptr_t word;
    memcpy(&word, handle + offset, sizeof word);
    if (word != value) continue;
    if (found >= 0) return -1;
    found = (long)offset;
  }
  return found;
}

static uintptr_t word_at(const void *handle, long offset) {
  uintptr_t word;
  memcpy(&word, (const char *)handle + offset, sizeof word);
  return word;
}

// Learns the offsets on a handle of this library's own: sets both options to known values, finds
// each once in the handle's memory (libcurl allocates a handle as one block: the search stays within
// it), then sets other values and checks that they are where the first ones were.
static void learn_header_offsets(void) {
  CURL *probe = curl.easy_init();
  if (probe == NULL) return;
  size_t size = malloc_usable_size(probe);
  if (curl.easy_setopt(probe, CCURLOPT_HEADERFUNCTION, offset_probe_first) == CCURLE_OK &&
      curl.easy_setopt(probe, CCURLOPT_HEADERDATA, (void *)&offset_probe_data) == CCURLE_OK) {
    long function_at = find_word(probe, size, (uintptr_t)offset_probe_first);
    long data_at = find_word(probe, size, (uintptr_t)&offset_probe_data);
    if (function_at >= 0 && data_at >= 0 &&
        curl.easy_setopt(probe, CCURLOPT_HEADERFUNCTION, offset_probe_second) == CCURLE_OK &&
        curl.easy_setopt(probe, CCURLOPT_HEADERDATA, (void *)probe) == CCURLE_OK &&
        word_at(probe, function_at) == (uintptr_t)offset_probe_second &&
        word_at(probe, data_at) == (uintptr_t)probe) {
      header_function_offset = function_at;
      header_data_offset = data_at;
    }
  }
  curl.easy_cleanup(probe);
}

static int hold_line(ccurl_header_gate *gate, const char *line, size_t length) {
  size_t needed = gate->held_length + sizeof(size_t) + length;
  if (needed < length) return -1;
  if (needed > gate->held_capacity) {
    size_t capacity = gate->held_capacity ? gate->held_capacity : 1024;
    while (capacity < needed) capacity *= 2;
    char *grown = realloc(gate->held, capacity);
    if (grown == NULL) return -1;
    gate->held = grown;
    gate->held_capacity = capacity;
  }
  memcpy(gate->held + gate->held_length, &length, sizeof length);
  memcpy(gate->held + gate->held_length + sizeof length, line, length);
  gate->held_length = needed;
  return 0;
}

static size_t count_held_lines(const ccurl_header_gate *gate) {
  size_t count = 0;
  for (size_t at = 0; at < gate->held_length; count++) {
    size_t length;
    memcpy(&length, gate->held + at, sizeof length);
    at += sizeof length + length;
  }
  return count;
}

// Whether the held head's Content-Length fields (each a comma-separated list) name more than one
// length: the framing is invalid then, and a user agent must not use the response (RFC 9112
// §6.3). libcurl takes the first number and reads the body by it. A value that is not a number is
// left to libcurl, which refuses it.
static int content_lengths_disagree(const ccurl_header_gate *gate) {
  static const char name[] = "content-length:";
  const size_t name_length = sizeof name - 1;
  int seen = 0;
  unsigned long long first = 0;
  for (size_t at = 0; at < gate->held_length;) {
    size_t length;
    memcpy(&length, gate->held + at, sizeof length);
    const char *line = gate->held + at + sizeof length;
    at += sizeof length + length;
    if (length < name_length || strncasecmp(line, name, name_length) != 0) continue;
    size_t i = name_length;
    while (i < length) {
      while (i < length && (line[i] == ' ' || line[i] == '\t' || line[i] == ',')) i++;
      if (i >= length || line[i] == '\r' || line[i] == '\n') break;
      if (line[i] < '0' || line[i] > '9') return 0;
      unsigned long long value = 0;
      for (; i < length && line[i] >= '0' && line[i] <= '9'; i++) {
        if (value > (~0ULL - 9) / 10) return 0;
        value = value * 10 + (unsigned long long)(line[i] - '0');
      }
      if (seen && value != first) return 1;
      seen = 1;
      first = value;
    }
  }
  return 0;
}

// Hands one held line to the original callback; returns whether it took it. FoundationNetworking's
// parser takes a line only with its CRLF, where RFC 9112 §2.2 lets a recipient end a line with a
// bare LF, as libcurl does: such a line is handed on with a CR before its LF.
static int hand_on(ccurl_header_gate *gate, char *line, size_t length) {
  if (length >= 1 && line[length - 1] == '\n' && (length < 2 || line[length - 2] != '\r')) {
    char *crlf = malloc(length + 1);
    if (crlf == NULL) return 0;
    memcpy(crlf, line, length - 1);
    crlf[length - 1] = '\r';
    crlf[length] = '\n';
    size_t taken = gate->original(crlf, 1, length + 1, gate->original_data);
    free(crlf);
    return taken == length + 1;
  }
  return gate->original(line, 1, length, gate->original_data) == length;
}

// libcurl hands the header callback one whole line per call: status lines, fields and the blank
// line that ends a head, and after a chunked or HTTP/2 body each trailer field, never followed by
// a blank line. A line starting a status line begins a new head: anything held before it never
// completed and is dropped.
static size_t gate_callback(char *buffer, size_t size, size_t nitems, void *userdata) {
  ccurl_header_gate *gate = userdata;
  size_t length = size * nitems;
  if (length >= 5 && memcmp(buffer, "HTTP/", 5) == 0) {
    gate->dropped_lines += count_held_lines(gate);
    gate->held_length = 0;
  }
  if (hold_line(gate, buffer, length) != 0) return 0;
  int blank = (length == 2 && buffer[0] == '\r' && buffer[1] == '\n') || (length == 1 && buffer[0] == '\n');
  if (!blank) return length;
  if (content_lengths_disagree(gate)) {
    gate->held_length = 0;
    gate->refused_framing = 1;
    return 0;
  }
  size_t at = 0;
  while (at < gate->held_length) {
    size_t line_length;
    memcpy(&line_length, gate->held + at, sizeof line_length);
    char *line = gate->held + at + sizeof line_length;
    if (!hand_on(gate, line, line_length)) {
      // Refused (or a pause, which a held line cannot honour): the transfer fails.
      gate->held_length = 0;
      return 0;
    }
    at += sizeof line_length + line_length;
  }
  gate->held_length = 0;
  return length;
}

ccurl_header_gate *ccurl_header_gate_install(CURL *easy, void *expected_header_data) {
  if (easy == NULL || load_result != 0) return NULL;
  pthread_once(&header_offsets_once, learn_header_offsets);
  if (header_function_offset < 0 || header_data_offset < 0) return NULL;
  if (word_at(easy, header_data_offset) != (uintptr_t)expected_header_data) return NULL;
  ccurl_write_callback original;
  uintptr_t function_word = word_at(easy, header_function_offset);
  memcpy(&original, &function_word, sizeof original);
  if (original == NULL || original == gate_callback) return NULL;
  ccurl_header_gate *gate = calloc(1, sizeof *gate);
  if (gate == NULL) return NULL;
  gate->original = original;
  gate->original_data = expected_header_data;
  if (curl.easy_setopt(easy, CCURLOPT_HEADERDATA, (void *)gate) != CCURLE_OK) {
    free(gate);
    return NULL;
  }
  if (curl.easy_setopt(easy, CCURLOPT_HEADERFUNCTION, gate_callback) != CCURLE_OK) {
    curl.easy_setopt(easy, CCURLOPT_HEADERDATA, expected_header_data);
    free(gate);
    return NULL;
  }
  return gate;
}

size_t ccurl_header_gate_dropped_lines(const ccurl_header_gate *gate) {
  return gate ? gate->dropped_lines + count_held_lines(gate) : 0;
}

int ccurl_header_gate_refused_framing(const ccurl_header_gate *gate) {
  return gate ? gate->refused_framing : 0;
}

void ccurl_header_gate_free(ccurl_header_gate *gate) {
  if (gate == NULL) return;
  free(gate->held);
  free(gate);
}

// MARK: - Memory files

int ccurl_memory_file(const void *bytes, size_t length) {
  int fd = memfd_create("sessionfetcher-trust", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  const char *next = bytes;
  size_t left = length;
  while (left > 0) {
    ssize_t wrote = write(fd, next, left);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      close(fd);
      return -1;
    }
    next += wrote;
    left -= (size_t)wrote;
  }
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

#elif defined(CCURL_DEFAULT_LIBRARY)  // macOS

// No FoundationNetworking beneath Apple's URLSession: no handle of its own to put a gate on.
ccurl_header_gate *ccurl_header_gate_install(CURL *easy, void *expected_header_data) {
  (void)easy;
  (void)expected_header_data;
  return 0;
}
size_t ccurl_header_gate_dropped_lines(const ccurl_header_gate *gate) { (void)gate; return 0; }
int ccurl_header_gate_refused_framing(const ccurl_header_gate *gate) { (void)gate; return 0; }
void ccurl_header_gate_free(ccurl_header_gate *gate) { (void)gate; }
// No memfd_create (nor /proc/self/fd to name one): the trust store writes its bundles to files.
int ccurl_memory_file(const void *bytes, size_t length) { (void)bytes; (void)length; return -1; }

#else  // iOS, tvOS, watchOS, visionOS: no libcurl to load; every entry point is inert.

int ccurl_load(void) { return -1; }
const char *ccurl_unavailable_reason(void) {
  return "the libcurl engine is unavailable on iOS, tvOS, watchOS and visionOS: they ship no libcurl an app "
         "may load (it runs on Linux and macOS)";
}
const char *ccurl_version(void) { return 0; }
unsigned int ccurl_version_number(void) { return 0; }
void ccurl_set_thread_name(const char *name) { (void)name; }
int ccurl_block_sigpipe_on_this_thread(void) { return 0; }
CURL *ccurl_easy_init(void) { return 0; }
void ccurl_easy_cleanup(CURL *easy) { (void)easy; }
void ccurl_easy_reset(CURL *easy) { (void)easy; }
int ccurl_easy_setopt_long(CURL *easy, int option, long value) { (void)easy; (void)option; (void)value; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_setopt_ptr(CURL *easy, int option, void *value) { (void)easy; (void)option; (void)value; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_setopt_blob(CURL *easy, int option, const void *data, size_t length) {
  (void)easy; (void)option; (void)data; (void)length;
  return CCURLE_NOT_BUILT_IN;
}
int ccurl_easy_setopt_off(CURL *easy, int option, ccurl_off_t value) { (void)easy; (void)option; (void)value; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_setopt_slist(CURL *easy, int option, struct curl_slist *list) { (void)easy; (void)option; (void)list; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_setopt_write_function(CURL *easy, int option, ccurl_write_callback callback) { (void)easy; (void)option; (void)callback; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_setopt_read_function(CURL *easy, int option, ccurl_read_callback callback) { (void)easy; (void)option; (void)callback; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_setopt_seek_function(CURL *easy, int option, ccurl_seek_callback callback) { (void)easy; (void)option; (void)callback; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_setopt_xferinfo_function(CURL *easy, int option, ccurl_xferinfo_callback callback) { (void)easy; (void)option; (void)callback; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_getinfo_long(CURL *easy, int info, long *value) { (void)easy; (void)info; *value = 0; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_getinfo_off(CURL *easy, int info, ccurl_off_t *value) { (void)easy; (void)info; *value = 0; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_getinfo_ptr(CURL *easy, int info, void **value) { (void)easy; (void)info; *value = 0; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_getinfo_string(CURL *easy, int info, const char **value) { (void)easy; (void)info; *value = 0; return CCURLE_NOT_BUILT_IN; }
int ccurl_easy_pause(CURL *easy, int bitmask) { (void)easy; (void)bitmask; return CCURLE_NOT_BUILT_IN; }
const char *ccurl_easy_strerror(int code) { (void)code; return "libcurl is unavailable on this platform"; }
CURLM *ccurl_multi_init(void) { return 0; }
int ccurl_multi_cleanup(CURLM *multi) { (void)multi; return 0; }
int ccurl_multi_setopt_long(CURLM *multi, int option, long value) { (void)multi; (void)option; (void)value; return 0; }
int ccurl_multi_add_handle(CURLM *multi, CURL *easy) { (void)multi; (void)easy; return 0; }
int ccurl_multi_remove_handle(CURLM *multi, CURL *easy) { (void)multi; (void)easy; return 0; }
int ccurl_multi_perform(CURLM *multi, int *running_handles) { (void)multi; *running_handles = 0; return 0; }
int ccurl_multi_poll(CURLM *multi, int timeout_ms, int *numfds) { (void)multi; (void)timeout_ms; *numfds = 0; return 0; }
int ccurl_multi_wakeup(CURLM *multi) { (void)multi; return 0; }
int ccurl_multi_info_read(CURLM *multi, CURL **easy, int *result, int *messages_left) { (void)multi; *easy = 0; *result = 0; *messages_left = 0; return CCURLMSG_NONE; }
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *string) { (void)list; (void)string; return 0; }
void ccurl_slist_free_all(struct curl_slist *list) { (void)list; }
ccurl_header_gate *ccurl_header_gate_install(CURL *easy, void *expected_header_data) {
  (void)easy; (void)expected_header_data;
  return 0;
}
size_t ccurl_header_gate_dropped_lines(const ccurl_header_gate *gate) { (void)gate; return 0; }
int ccurl_header_gate_refused_framing(const ccurl_header_gate *gate) { (void)gate; return 0; }
void ccurl_header_gate_free(ccurl_header_gate *gate) { (void)gate; }
int ccurl_memory_file(const void *bytes, size_t length) { (void)bytes; (void)length; return -1; }

#endif
