/* vclock.c: the registered virtual clock (vclock.h). */
#include "base/vclock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const pg__vclock_ops *cur_ops;
static void *cur_ctx;

void pg__vclock_register(const pg__vclock_ops *ops, void *ctx) {
    pthread_mutex_lock(&mu);
    if (!cur_ops) {
        cur_ops = ops;
        cur_ctx = ctx;
    }
    pthread_mutex_unlock(&mu);
}

void pg__vclock_unregister(void *ctx) {
    pthread_mutex_lock(&mu);
    if (cur_ops && cur_ctx == ctx) {
        cur_ops = NULL;
        cur_ctx = NULL;
    }
    pthread_mutex_unlock(&mu);
}

int pg__vclock_get(const pg__vclock_ops **ops, void **ctx) {
    pthread_mutex_lock(&mu);
    *ops = cur_ops;
    *ctx = cur_ctx;
    pthread_mutex_unlock(&mu);
    return *ops != NULL;
}

static atomic_int blocked;

void pg__vclock_set_blocked(int on) {
    atomic_store(&blocked, on);
}

int pg__vclock_blocked(void) {
    return atomic_load(&blocked);
}
