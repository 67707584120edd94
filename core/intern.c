/* intern.c: copies of strings kept for the life of the process, one per distinct value. */
#include "core/options.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* pg_options_set's values: a pg_options is a plain struct that callers copy by value and never
 * free, so its strings cannot be owned by one struct (a copy would dangle or be freed twice).
 * Kept here instead, they stay valid however the struct is copied; keeping one copy per
 * distinct value bounds the memory by the values a program uses, not by how often it sets them. */

#define BUCKETS 256

typedef struct entry {
    struct entry *next;
    char s[];
} entry;

static entry *table[BUCKETS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static unsigned hash(const char *s) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h % BUCKETS;
}

const char *pg__intern(const char *s) {
    unsigned b = hash(s);
    pthread_mutex_lock(&mu);
    entry *e = table[b];
    while (e && strcmp(e->s, s))
        e = e->next;
    if (!e) {
        size_t n = strlen(s) + 1;
        if ((e = pg__malloc(sizeof *e + n))) {
            memcpy(e->s, s, n);
            e->next = table[b];
            table[b] = e;
        }
    }
    pthread_mutex_unlock(&mu);
    return e ? e->s : NULL;
}
