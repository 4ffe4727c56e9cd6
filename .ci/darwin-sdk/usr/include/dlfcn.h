// Stand-in for the SDK's dlfcn.h (see ../../README.md).
#ifndef DLFCN_STANDIN_H
#define DLFCN_STANDIN_H
#define RTLD_LAZY 0x1
#define RTLD_NOW 0x2
#define RTLD_LOCAL 0x4
#define RTLD_GLOBAL 0x8
extern void *dlopen(const char *__path, int __mode);
extern void *dlsym(void *__handle, const char *__symbol);
extern char *dlerror(void);
extern int dlclose(void *__handle);
#endif
