/* A test helper for tests/python/test_lifetime.py (PY-52): runs a C callback on a new native
 * thread after a delay, so that a deleter can race the interpreter's exit from a thread
 * Python never saw. Loaded with ctypes; built by python/CMakeLists.txt. */
#define _POSIX_C_SOURCE 200809L /* nanosleep under a strict -std=c11 */

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef void (*dlbt_callback)(void*);

struct dlbt_job {
  dlbt_callback callback;
  void* argument;
  long delay_ns;
};

static void* dlbt_run(void* p) {
  struct dlbt_job job = *(struct dlbt_job*)p;
  free(p);
  struct timespec delay = {job.delay_ns / 1000000000L, job.delay_ns % 1000000000L};
  nanosleep(&delay, NULL);
  job.callback(job.argument);
  return NULL;
}

/* Calls callback(argument) on a new detached thread after delay_ns; 0 on success. */
int dlbt_call_later(dlbt_callback callback, void* argument, long delay_ns) {
  struct dlbt_job* job = (struct dlbt_job*)malloc(sizeof *job);
  if (job == NULL) return -1;
  job->callback = callback;
  job->argument = argument;
  job->delay_ns = delay_ns;
  pthread_t thread;
  if (pthread_create(&thread, NULL, dlbt_run, job) != 0) {
    free(job);
    return -1;
  }
  pthread_detach(thread);
  return 0;
}
