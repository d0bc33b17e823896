// Diagnostic only (not built by npm; docs/benchmarks.md, "A working day in one window"): where the
// extension host's malloc memory goes during a soak on VS Code 1.100.3.
//
//   gcc -O2 -shared -fPIC -o /usr/local/lib/mg-malloc-probe.so bench/diagnostics/mallocProbe.c -lpthread
//   echo /usr/local/lib/mg-malloc-probe.so > /etc/ld.so.preload      # root; remove it after the run
//   MG_SOAK_SCALE=0.4 MODEL_GATEWAY_VSCODE=oldest npm run bench -- soak &
//   echo info > /tmp/mg-arena/ask-<extension host pid>                 # or "trim": malloc_trim(0) too
//   rm /etc/ld.so.preload
//
// VS Code removes LD_PRELOAD from the extension host's environment, hence the system-wide preload;
// the library does nothing in any process but code-server 4.100.3's extension host. When
// /tmp/mg-arena/ask-<pid> appears it writes malloc_info to /tmp/mg-arena/info-<pid>-<n>-before.xml
// (and -after.xml when asked to trim).
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void dump(const char *tag, int n) {
  char path[256];
  snprintf(path, sizeof path, "/tmp/mg-arena/info-%d-%d-%s.xml", getpid(), n, tag);
  FILE *f = fopen(path, "w");
  if (f) { malloc_info(0, f); fclose(f); }
}
static void *watch(void *arg) {
  (void)arg;
  char ask[128];
  snprintf(ask, sizeof ask, "/tmp/mg-arena/ask-%d", getpid());
  for (int n = 0;; ) {
    sleep(1);
    FILE *f = fopen(ask, "r");
    if (!f) continue;
    char buf[16] = {0};
    fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    unlink(ask);
    n++;
    dump("before", n);
    if (strncmp(buf, "trim", 4) == 0) { malloc_trim(0); dump("after", n); }
  }
  return 0;
}
__attribute__((constructor)) static void start(void) {
  char cmd[4096] = {0};
  FILE *c = fopen("/proc/self/cmdline", "r");
  if (!c) return;
  size_t n = fread(cmd, 1, sizeof cmd - 1, c);
  fclose(c);
  for (size_t i = 0; i < n; i++) if (!cmd[i]) cmd[i] = ' ';
  if (!strstr(cmd, "type=extensionHost") || !strstr(cmd, "code-server-4.100.3")) return;
  pthread_t t;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  pthread_create(&t, &a, watch, 0);
}
