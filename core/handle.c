/* handle.c: generation-checked handles, so a freed or doubly freed handle is reported instead
 * of touching freed memory. A handle is (generation << 24 | slot + 1). */
#include "core/internal.h"

#include <pthread.h>
#include <stdlib.h>

#define CHUNK_BITS 12
#define CHUNK (1u << CHUNK_BITS)
#define MAX_CHUNKS 4096 /* 16M live handles */

typedef struct slot {
    uint64_t gen; /* bumped on release, so stale handles never match */
    int kind;
    void *obj;
    uint32_t next_free;
} slot;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static slot *chunks[MAX_CHUNKS];
static uint32_t nslots;
static uint32_t free_head; /* slot index + 1; 0 = empty */

static slot *at(uint32_t i) {
    return &chunks[i >> CHUNK_BITS][i & (CHUNK - 1)];
}

uint64_t pg__handle_new(int kind, void *obj) {
    pthread_mutex_lock(&mu);
    uint32_t i;
    if (free_head) {
        i = free_head - 1;
        free_head = at(i)->next_free;
    } else {
        if ((nslots >> CHUNK_BITS) >= MAX_CHUNKS) {
            pthread_mutex_unlock(&mu);
            return 0;
        }
        if (!chunks[nslots >> CHUNK_BITS]) {
            chunks[nslots >> CHUNK_BITS] = calloc(CHUNK, sizeof(slot));
            if (!chunks[nslots >> CHUNK_BITS]) {
                pthread_mutex_unlock(&mu);
                return 0;
            }
        }
        i = nslots++;
        at(i)->gen = 1;
    }
    slot *s = at(i);
    s->kind = kind;
    s->obj = obj;
    uint64_t h = (s->gen << 24) | (uint64_t)(i + 1);
    pthread_mutex_unlock(&mu);
    return h;
}

static slot *find(uint64_t h) {
    uint32_t i = (uint32_t)(h & 0xffffff);
    if (i == 0 || i > nslots)
        return NULL;
    slot *s = at(i - 1);
    return s->gen == (h >> 24) && s->obj ? s : NULL;
}

void *pg__handle_get(uint64_t h, int kind) {
    pthread_mutex_lock(&mu);
    slot *s = find(h);
    void *obj = s && s->kind == kind ? s->obj : NULL;
    pthread_mutex_unlock(&mu);
    return obj;
}

void pg__handle_release(uint64_t h) {
    pthread_mutex_lock(&mu);
    slot *s = find(h);
    if (s) {
        s->gen++;
        s->obj = NULL;
        s->kind = 0;
        s->next_free = free_head;
        free_head = (uint32_t)(h & 0xffffff);
    }
    pthread_mutex_unlock(&mu);
}
