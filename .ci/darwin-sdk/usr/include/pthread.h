// Stand-in for the SDK's pthread.h (see ../../README.md).
#ifndef PTHREAD_STANDIN_H
#define PTHREAD_STANDIN_H
typedef struct _opaque_pthread_t *pthread_t;
typedef struct _opaque_pthread_once_t {
  long __sig;
  char __opaque[8];
} pthread_once_t;
#define PTHREAD_ONCE_INIT {0x30B1BCBA, {0}}
int pthread_once(pthread_once_t *, void (*)(void));
pthread_t pthread_self(void);
int pthread_setname_np(const char *);
#endif
