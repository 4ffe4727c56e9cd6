/* libcurl alone, as a floor for the libcurl engine's sequential rows: one easy handle on one multi
 * handle, driven from one thread (curl_multi_perform and curl_multi_poll, as the engine's loop
 * does), GETting one URL N times after 100 warm-up requests. Prints requests per second and the
 * process's CPU per request. Not built by run.sh; it needs libcurl's headers
 * (apt-get install libcurl4-openssl-dev):
 *
 *   cc -O2 -o curl-loop Benchmarks/curl-loop.c -lcurl
 *   ./curl-loop https://127.0.0.1:18932/small.txt 6000 /tmp/bw/tls/ca.pem
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static size_t discard(char *bytes, size_t size, size_t count, void *user) {
  (void)bytes;
  (void)user;
  return size * count;
}

static double seconds(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec + now.tv_nsec / 1e9;
}

static double cpu_seconds(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static int get_once(CURLM *multi, CURL *easy) {
  int running = 1;
  curl_multi_add_handle(multi, easy);
  while (running) {
    if (curl_multi_perform(multi, &running) != CURLM_OK) return -1;
    if (running) curl_multi_poll(multi, NULL, 0, 1000, NULL);
  }
  int remaining, failed = 0;
  CURLMsg *message;
  while ((message = curl_multi_info_read(multi, &remaining)))
    if (message->msg == CURLMSG_DONE && message->data.result != CURLE_OK) failed = 1;
  curl_multi_remove_handle(multi, easy);
  return failed ? -1 : 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s URL COUNT [CA-FILE]\n", argv[0]);
    return 2;
  }
  int count = atoi(argv[2]);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURL *easy = curl_easy_init();
  CURLM *multi = curl_multi_init();
  curl_easy_setopt(easy, CURLOPT_URL, argv[1]);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
  if (argc > 3) curl_easy_setopt(easy, CURLOPT_CAINFO, argv[3]);
  for (int i = 0; i < 100; i++)
    if (get_once(multi, easy) != 0) {
      fprintf(stderr, "warm-up request failed\n");
      return 1;
    }
  double start = seconds(), start_cpu = cpu_seconds();
  for (int i = 0; i < count; i++)
    if (get_once(multi, easy) != 0) {
      fprintf(stderr, "request %d failed\n", i);
      return 1;
    }
  double wall = seconds() - start, cpu = cpu_seconds() - start_cpu;
  printf("RESULT rps=%.1f cpu_us_per_op=%.1f\n", count / wall, cpu / count * 1e6);
  curl_multi_cleanup(multi);
  curl_easy_cleanup(easy);
  curl_global_cleanup();
  return 0;
}
