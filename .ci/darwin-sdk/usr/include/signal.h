// Stand-in for the SDK's signal.h (see ../../README.md).
#ifndef SIGNAL_STANDIN_H
#define SIGNAL_STANDIN_H
typedef unsigned int sigset_t;
#define SIGPIPE 13
#define SIG_BLOCK 1
#define SIG_UNBLOCK 2
#define SIG_SETMASK 3
int sigemptyset(sigset_t *);
int sigaddset(sigset_t *, int);
int pthread_sigmask(int, const sigset_t *, sigset_t *);
#endif
