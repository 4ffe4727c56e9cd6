// CCurl: the libcurl engine's bridge to libcurl, loaded at run time: on Linux the libcurl.so.4
// FoundationNetworking runs on, on macOS the system's /usr/lib/libcurl.4.dylib (iOS, tvOS, watchOS
// and visionOS have none: every function is inert there and ccurl_load() says why).
//
// No curl header is included (a machine with only the Swift toolchain has none): the few types,
// numbers and prototypes used are declared here, copied from libcurl's public headers
// (include/curl/curl.h and multi.h). They are libcurl's ABI, stable since 7.68.0.
//
// libcurl is opened with dlopen at the first call of ccurl_load(), never linked. Swift gets plain,
// non-variadic functions; each forwards to the function resolved with dlsym. Calling any of them
// before ccurl_load() returned 0 is a programming error (they would call through NULL).
//
// Threading: ccurl_load, ccurl_unavailable_reason, ccurl_version and ccurl_easy_strerror may be
// called from any thread. The easy and multi functions follow libcurl's rule: one handle is used
// by one thread at a time (the engine's loop thread), except ccurl_multi_wakeup, which any thread
// may call while the multi handle exists.

#ifndef CCURL_H
#define CCURL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Types

/// An easy handle (one transfer). Opaque.
typedef void CURL;
/// A multi handle (many transfers driven together). Opaque.
typedef void CURLM;

/// libcurl's linked list of strings (request headers). Layout as in curl.h.
struct curl_slist {
  char *data;
  struct curl_slist *next;
};

/// curl_off_t: a signed 64-bit integer on Linux and macOS.
typedef int64_t ccurl_off_t;

/// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION, as libcurl calls them:
/// `size_t write(char *buffer, size_t size, size_t nitems, void *userdata)`.
/// Returns the bytes taken (size * nitems), CCURL_WRITEFUNC_PAUSE, or anything else to abort.
typedef size_t (*ccurl_write_callback)(char *buffer, size_t size, size_t nitems, void *userdata);

/// CURLOPT_READFUNCTION, as libcurl calls it:
/// `size_t read(char *buffer, size_t size, size_t nitems, void *userdata)`.
/// Returns the bytes written into buffer (0 at the end), CCURL_READFUNC_ABORT or _PAUSE.
typedef size_t (*ccurl_read_callback)(char *buffer, size_t size, size_t nitems, void *userdata);

/// CURLOPT_XFERINFOFUNCTION, as libcurl calls it:
/// `int xferinfo(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
/// curl_off_t ulnow)`. Returns 0 to go on, anything else to abort (CURLE_ABORTED_BY_CALLBACK).
typedef int (*ccurl_xferinfo_callback)(
    void *userdata, ccurl_off_t dltotal, ccurl_off_t dlnow, ccurl_off_t ultotal, ccurl_off_t ulnow);

/// CURLOPT_SEEKFUNCTION, as libcurl calls it (to rewind a body it must send again):
/// `int seek(void *userdata, curl_off_t offset, int origin)` (origin is SEEK_SET, SEEK_CUR or
/// SEEK_END). Returns CCURL_SEEKFUNC_OK, _FAIL or _CANTSEEK.
typedef int (*ccurl_seek_callback)(void *userdata, ccurl_off_t offset, int origin);

// MARK: - CURLcode (curl.h, enum CURLcode)

#define CCURLE_OK 0
#define CCURLE_UNSUPPORTED_PROTOCOL 1
#define CCURLE_FAILED_INIT 2
#define CCURLE_URL_MALFORMAT 3
#define CCURLE_NOT_BUILT_IN 4
#define CCURLE_COULDNT_RESOLVE_PROXY 5
#define CCURLE_COULDNT_RESOLVE_HOST 6
#define CCURLE_COULDNT_CONNECT 7
#define CCURLE_WEIRD_SERVER_REPLY 8
#define CCURLE_HTTP2 16
#define CCURLE_PARTIAL_FILE 18
#define CCURLE_WRITE_ERROR 23
#define CCURLE_UPLOAD_FAILED 25
#define CCURLE_READ_ERROR 26
#define CCURLE_OUT_OF_MEMORY 27
#define CCURLE_OPERATION_TIMEDOUT 28
#define CCURLE_RANGE_ERROR 33
#define CCURLE_SSL_CONNECT_ERROR 35
#define CCURLE_ABORTED_BY_CALLBACK 42
#define CCURLE_BAD_FUNCTION_ARGUMENT 43
#define CCURLE_TOO_MANY_REDIRECTS 47
#define CCURLE_UNKNOWN_OPTION 48
#define CCURLE_GOT_NOTHING 52
#define CCURLE_SEND_ERROR 55
#define CCURLE_RECV_ERROR 56
#define CCURLE_SSL_CERTPROBLEM 58
#define CCURLE_SSL_CIPHER 59
#define CCURLE_PEER_FAILED_VERIFICATION 60
#define CCURLE_BAD_CONTENT_ENCODING 61
#define CCURLE_FILESIZE_EXCEEDED 63
#define CCURLE_SEND_FAIL_REWIND 65
#define CCURLE_SSL_ENGINE_INITFAILED 66
#define CCURLE_SSL_CACERT_BADFILE 77
#define CCURLE_SSL_SHUTDOWN_FAILED 80
#define CCURLE_AGAIN 81
#define CCURLE_SSL_CRL_BADFILE 82
#define CCURLE_SSL_ISSUER_ERROR 83
#define CCURLE_SSL_PINNEDPUBKEYNOTMATCH 90
#define CCURLE_SSL_INVALIDCERTSTATUS 91
#define CCURLE_HTTP2_STREAM 92
#define CCURLE_RECURSIVE_API_CALL 93
#define CCURLE_AUTH_ERROR 94
#define CCURLE_HTTP3 95
/// CURLE_PROXY (7.73.0): a SOCKS or HTTPS proxy handshake failed.
#define CCURLE_PROXY 97

// MARK: - CURLMcode, CURLMSG (multi.h)

#define CCURLM_CALL_MULTI_PERFORM (-1)
#define CCURLM_OK 0
/// CURLMSG_NONE
#define CCURLMSG_NONE 0
/// CURLMSG_DONE: the transfer ended; its CURLcode is in the message.
#define CCURLMSG_DONE 1

// MARK: - Easy options (curl.h, CURLOPT(name, type base, number))

#define CCURLOPTTYPE_LONG 0
#define CCURLOPTTYPE_OBJECTPOINT 10000
#define CCURLOPTTYPE_FUNCTIONPOINT 20000
#define CCURLOPTTYPE_OFF_T 30000
#define CCURLOPTTYPE_BLOB 40000

// TLS (curl.h)
#define CCURLOPT_SSLCERT (CCURLOPTTYPE_OBJECTPOINT + 25)
#define CCURLOPT_KEYPASSWD (CCURLOPTTYPE_OBJECTPOINT + 26)
#define CCURLOPT_SSLVERSION (CCURLOPTTYPE_LONG + 32)
#define CCURLOPT_CAINFO (CCURLOPTTYPE_OBJECTPOINT + 65)
#define CCURLOPT_SSLKEY (CCURLOPTTYPE_OBJECTPOINT + 87)
#define CCURLOPT_CAPATH (CCURLOPTTYPE_OBJECTPOINT + 97)
#define CCURLOPT_PINNEDPUBLICKEY (CCURLOPTTYPE_OBJECTPOINT + 230)
#define CCURLOPT_CAINFO_BLOB (CCURLOPTTYPE_BLOB + 309)
#define CCURL_SSLVERSION_TLSv1_2 6
#define CCURL_SSLVERSION_TLSv1_3 7

#define CCURLOPT_WRITEDATA (CCURLOPTTYPE_OBJECTPOINT + 1)
#define CCURLOPT_URL (CCURLOPTTYPE_OBJECTPOINT + 2)
#define CCURLOPT_PROXY (CCURLOPTTYPE_OBJECTPOINT + 4)
#define CCURLOPT_READDATA (CCURLOPTTYPE_OBJECTPOINT + 9)
#define CCURLOPT_ERRORBUFFER (CCURLOPTTYPE_OBJECTPOINT + 10)
#define CCURLOPT_WRITEFUNCTION (CCURLOPTTYPE_FUNCTIONPOINT + 11)
#define CCURLOPT_READFUNCTION (CCURLOPTTYPE_FUNCTIONPOINT + 12)
#define CCURLOPT_HTTPHEADER (CCURLOPTTYPE_OBJECTPOINT + 23)
#define CCURLOPT_HEADERDATA (CCURLOPTTYPE_OBJECTPOINT + 29)
#define CCURLOPT_CUSTOMREQUEST (CCURLOPTTYPE_OBJECTPOINT + 36)
#define CCURLOPT_NOPROGRESS (CCURLOPTTYPE_LONG + 43)
#define CCURLOPT_NOBODY (CCURLOPTTYPE_LONG + 44)
#define CCURLOPT_UPLOAD (CCURLOPTTYPE_LONG + 46)
#define CCURLOPT_POST (CCURLOPTTYPE_LONG + 47)
#define CCURLOPT_FOLLOWLOCATION (CCURLOPTTYPE_LONG + 52)
#define CCURLOPT_XFERINFODATA (CCURLOPTTYPE_OBJECTPOINT + 57)
#define CCURLOPT_HEADERFUNCTION (CCURLOPTTYPE_FUNCTIONPOINT + 79)
#define CCURLOPT_FORBID_REUSE (CCURLOPTTYPE_LONG + 75)
#define CCURLOPT_HTTPGET (CCURLOPTTYPE_LONG + 80)
#define CCURLOPT_HTTP_VERSION (CCURLOPTTYPE_LONG + 84)
#define CCURLOPT_BUFFERSIZE (CCURLOPTTYPE_LONG + 98)
#define CCURLOPT_NOSIGNAL (CCURLOPTTYPE_LONG + 99)
#define CCURLOPT_ACCEPT_ENCODING (CCURLOPTTYPE_OBJECTPOINT + 102)
#define CCURLOPT_PRIVATE (CCURLOPTTYPE_OBJECTPOINT + 103)
#define CCURLOPT_HTTPAUTH (CCURLOPTTYPE_LONG + 107)
#define CCURLOPT_PROXYAUTH (CCURLOPTTYPE_LONG + 111)
#define CCURLOPT_INFILESIZE_LARGE (CCURLOPTTYPE_OFF_T + 115)
#define CCURLOPT_POSTFIELDSIZE_LARGE (CCURLOPTTYPE_OFF_T + 120)
#define CCURLOPT_TCP_NODELAY (CCURLOPTTYPE_LONG + 121)
#define CCURLOPT_SEEKFUNCTION (CCURLOPTTYPE_FUNCTIONPOINT + 167)
#define CCURLOPT_SEEKDATA (CCURLOPTTYPE_OBJECTPOINT + 168)
#define CCURLOPT_HTTP_CONTENT_DECODING (CCURLOPTTYPE_LONG + 158)
#define CCURLOPT_USERNAME (CCURLOPTTYPE_OBJECTPOINT + 173)
#define CCURLOPT_PASSWORD (CCURLOPTTYPE_OBJECTPOINT + 174)
#define CCURLOPT_PROXYUSERNAME (CCURLOPTTYPE_OBJECTPOINT + 175)
#define CCURLOPT_PROXYPASSWORD (CCURLOPTTYPE_OBJECTPOINT + 176)
#define CCURLOPT_NOPROXY (CCURLOPTTYPE_OBJECTPOINT + 177)
#define CCURLOPT_UNIX_SOCKET_PATH (CCURLOPTTYPE_OBJECTPOINT + 231)
#define CCURLOPT_XFERINFOFUNCTION (CCURLOPTTYPE_FUNCTIONPOINT + 219)
#define CCURLOPT_PIPEWAIT (CCURLOPTTYPE_LONG + 237)
#define CCURLOPT_SUPPRESS_CONNECT_HEADERS (CCURLOPTTYPE_LONG + 265)
#define CCURLOPT_UPLOAD_BUFFERSIZE (CCURLOPTTYPE_LONG + 280)
#define CCURLOPT_MAXFILESIZE_LARGE (CCURLOPTTYPE_OFF_T + 117)

/// CURLOPT_HTTP_VERSION values.
#define CCURL_HTTP_VERSION_1_1 2
#define CCURL_HTTP_VERSION_2TLS 4
/// CURLOPT_HTTPAUTH / CURLOPT_PROXYAUTH value CURLAUTH_BASIC.
#define CCURLAUTH_BASIC 1

/// Callback return values (curl.h).
#define CCURL_WRITEFUNC_PAUSE 0x10000001
#define CCURL_READFUNC_ABORT 0x10000000
#define CCURL_READFUNC_PAUSE 0x10000001
#define CCURL_SEEKFUNC_OK 0
#define CCURL_SEEKFUNC_FAIL 1
#define CCURL_SEEKFUNC_CANTSEEK 2

/// curl_easy_pause bits.
#define CCURLPAUSE_RECV 1
#define CCURLPAUSE_SEND 4
#define CCURLPAUSE_CONT 0

/// The size CURLOPT_ERRORBUFFER must have.
#define CCURL_ERROR_SIZE 256

// MARK: - Multi options (multi.h)

#define CCURLMOPT_PIPELINING (CCURLOPTTYPE_LONG + 3)
#define CCURLMOPT_MAXCONNECTS (CCURLOPTTYPE_LONG + 6)
#define CCURLMOPT_MAX_HOST_CONNECTIONS (CCURLOPTTYPE_LONG + 7)
#define CCURLMOPT_MAX_TOTAL_CONNECTIONS (CCURLOPTTYPE_LONG + 13)
/// CURLMOPT_PIPELINING value CURLPIPE_MULTIPLEX.
#define CCURLPIPE_MULTIPLEX 2

// MARK: - Info (curl.h, CURLINFO type base + number)

#define CCURLINFO_STRING 0x100000
#define CCURLINFO_LONG 0x200000
#define CCURLINFO_OFF_T 0x600000

#define CCURLINFO_RESPONSE_CODE (CCURLINFO_LONG + 2)
#define CCURLINFO_SIZE_UPLOAD_T (CCURLINFO_OFF_T + 7)
#define CCURLINFO_SIZE_DOWNLOAD_T (CCURLINFO_OFF_T + 8)
#define CCURLINFO_HEADER_SIZE (CCURLINFO_LONG + 11)
/// The status of a proxy's answer to CONNECT (0 when no CONNECT was sent).
#define CCURLINFO_HTTP_CONNECTCODE (CCURLINFO_LONG + 22)
#define CCURLINFO_REQUEST_SIZE (CCURLINFO_LONG + 12)
#define CCURLINFO_PRIVATE (CCURLINFO_STRING + 21)
#define CCURLINFO_NUM_CONNECTS (CCURLINFO_LONG + 26)
#define CCURLINFO_PRIMARY_IP (CCURLINFO_STRING + 32)
#define CCURLINFO_PRIMARY_PORT (CCURLINFO_LONG + 40)
#define CCURLINFO_HTTP_VERSION (CCURLINFO_LONG + 46)
#define CCURLINFO_TOTAL_TIME_T (CCURLINFO_OFF_T + 50)
#define CCURLINFO_NAMELOOKUP_TIME_T (CCURLINFO_OFF_T + 51)
#define CCURLINFO_CONNECT_TIME_T (CCURLINFO_OFF_T + 52)
#define CCURLINFO_PRETRANSFER_TIME_T (CCURLINFO_OFF_T + 53)
#define CCURLINFO_STARTTRANSFER_TIME_T (CCURLINFO_OFF_T + 54)
#define CCURLINFO_APPCONNECT_TIME_T (CCURLINFO_OFF_T + 56)

/// CURLINFO_HTTP_VERSION values (CURL_HTTP_VERSION_*).
#define CCURL_HTTP_VERSION_1_0 1
#define CCURL_HTTP_VERSION_2_0 3
#define CCURL_HTTP_VERSION_3 30

// MARK: - Loading

/// Loads libcurl once (later calls return the first answer): dlopen of "libcurl.so.4", or of the
/// path in the environment variable SESSIONFETCHER_LIBCURL_PATH when set (read at the first call);
/// resolves every function below, checks the version (7.68.0 or later) and calls curl_global_init.
/// Returns 0 when libcurl is usable, -1 otherwise (see ccurl_unavailable_reason).
int ccurl_load(void);
/// Why libcurl cannot be used, or NULL when it can (or ccurl_load was not called yet).
/// A static string, valid for the life of the process.
const char *ccurl_unavailable_reason(void);
/// libcurl's version string (such as "7.88.1"), or NULL when not loaded.
const char *ccurl_version(void);
/// The version as a number (0x075801 for 7.88.1), or 0 when not loaded.
unsigned int ccurl_version_number(void);

/// Names the calling thread as the system shows it (at most 15 bytes; longer names are cut).
void ccurl_set_thread_name(const char *name);

/// Blocks SIGPIPE for the calling thread (and threads it starts later): a write to a connection the
/// peer closed then fails with EPIPE instead of killing the process. Returns 0 on success.
int ccurl_block_sigpipe_on_this_thread(void);

// MARK: - Easy interface

CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *easy);
/// `curl_easy_reset`: every option back to its default; the handle keeps its caches.
void ccurl_easy_reset(CURL *easy);
int ccurl_easy_setopt_long(CURL *easy, int option, long value);
/// For options taking a pointer (strings are copied by libcurl; other pointers must outlive use).
int ccurl_easy_setopt_ptr(CURL *easy, int option, void *value);
/// A CURLOPTTYPE_BLOB option (7.71.0): libcurl copies the bytes.
int ccurl_easy_setopt_blob(CURL *easy, int option, const void *data, size_t length);
int ccurl_easy_setopt_off(CURL *easy, int option, ccurl_off_t value);
int ccurl_easy_setopt_slist(CURL *easy, int option, struct curl_slist *list);
int ccurl_easy_setopt_write_function(CURL *easy, int option, ccurl_write_callback callback);
int ccurl_easy_setopt_read_function(CURL *easy, int option, ccurl_read_callback callback);
int ccurl_easy_setopt_seek_function(CURL *easy, int option, ccurl_seek_callback callback);
int ccurl_easy_setopt_xferinfo_function(CURL *easy, int option, ccurl_xferinfo_callback callback);
int ccurl_easy_getinfo_long(CURL *easy, int info, long *value);
int ccurl_easy_getinfo_off(CURL *easy, int info, ccurl_off_t *value);
/// For CURLINFO_PRIVATE (the pointer set with CURLOPT_PRIVATE).
int ccurl_easy_getinfo_ptr(CURL *easy, int info, void **value);
/// For string infos (char *); the string belongs to the handle.
int ccurl_easy_getinfo_string(CURL *easy, int info, const char **value);
int ccurl_easy_pause(CURL *easy, int bitmask);
/// libcurl's text for a CURLcode; a static string.
const char *ccurl_easy_strerror(int code);

// MARK: - Multi interface

CURLM *ccurl_multi_init(void);
int ccurl_multi_cleanup(CURLM *multi);
int ccurl_multi_setopt_long(CURLM *multi, int option, long value);
int ccurl_multi_add_handle(CURLM *multi, CURL *easy);
int ccurl_multi_remove_handle(CURLM *multi, CURL *easy);
int ccurl_multi_perform(CURLM *multi, int *running_handles);
/// curl_multi_poll with no extra file descriptors.
int ccurl_multi_poll(CURLM *multi, int timeout_ms, int *numfds);
/// Wakes a curl_multi_poll sleeping in another thread. Thread-safe.
int ccurl_multi_wakeup(CURLM *multi);
/// One message of curl_multi_info_read: returns its kind (CCURLMSG_DONE, or CCURLMSG_NONE when
/// there is none left) and fills easy and result (the transfer's CURLcode).
int ccurl_multi_info_read(CURLM *multi, CURL **easy, int *result, int *messages_left);

// MARK: - Header gate (for easy handles made by FoundationNetworking)

/// A header callback placed in front of another one on an easy handle this library did not make
/// (FoundationNetworking's): it hands the lines on only as whole heads, each from its status line
/// to the blank line that ends it, and drops lines that never reach such a blank line, such as the
/// trailer fields libcurl hands to the header callback after a chunked or HTTP/2 body.
typedef struct ccurl_header_gate ccurl_header_gate;

/// Puts a gate in front of `easy`'s header callback, whose data pointer (CURLOPT_HEADERDATA) must
/// be `expected_header_data`. libcurl has no getter for options: the callback in place is read
/// from the handle at an offset learned once on a handle of this library's own, and used only when
/// the data pointer at its offset is the one expected. Returns the gate, or NULL when the handle
/// could not be read so (nothing is changed then).
/// The handle must not be in a transfer. Free the gate with ccurl_header_gate_free once the handle
/// can no longer call back (its transfer ended and it was removed from its multi handle).
ccurl_header_gate *ccurl_header_gate_install(CURL *easy, void *expected_header_data);
/// How many lines the gate has dropped.
size_t ccurl_header_gate_dropped_lines(const ccurl_header_gate *gate);
/// Whether the gate refused a head whose Content-Length fields name different lengths (RFC 9112
/// §6.3), failing the transfer; lines ending in a bare LF are handed on with CRLF.
int ccurl_header_gate_refused_framing(const ccurl_header_gate *gate);
void ccurl_header_gate_free(ccurl_header_gate *gate);

// MARK: - Memory files

/// An anonymous file in memory (memfd_create, Linux 3.17) holding `length` bytes of `bytes`, sealed
/// against any change, closed on exec; its descriptor, or -1 when one cannot be made. Nothing of it
/// is on a file system: it is gone when its last descriptor closes, or when the process ends.
int ccurl_memory_file(const void *bytes, size_t length);

// MARK: - Lists

/// Appends a copy of string; returns the new head, or NULL when out of memory (list unchanged).
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *string);
void ccurl_slist_free_all(struct curl_slist *list);

#ifdef __cplusplus
}
#endif

#endif
