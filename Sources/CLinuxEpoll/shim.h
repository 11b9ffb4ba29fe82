// epoll(7) for the benchmark's probe receivers (Glibc's Swift module does not include it).
#include <sys/epoll.h>
