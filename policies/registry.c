/* registry.c: device policies by name — the built-ins and those a C user registers. */
#include "policies/registry.h"

#include "base/error.h"
#include "policies/builtin.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POLICIES 64

typedef struct entry {
    char name[64];
    pg_device_policy ops;
    int builtin;
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry table[MAX_POLICIES];
static int count;

static void add_builtins(void) {
    if (count)
        return;
    const pg__builtin_policy *b = pg__builtin_policies();
    for (; b->name; b++) {
        strcpy(table[count].name, b->name);
        table[count].ops = b->ops;
        table[count].builtin = 1;
        count++;
    }
}

static entry *find(const char *name) {
    for (int i = 0; i < count; i++)
        if (!strcmp(table[i].name, name))
            return &table[i];
    return NULL;
}

pg_status pg__policy_add(const char *name, const pg_device_policy *policy) {
    if (!name || !*name || strlen(name) >= sizeof table[0].name)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_policy_register: the name must have 1 to 63 characters");
    if (!policy || !policy->choose)
        return pg__error(PG_ERROR_ARGUMENT,
                         "pg_policy_register: policy '%s' needs a choose function", name);
    pthread_mutex_lock(&mu);
    add_builtins();
    entry *e = find(name);
    pg_status st = PG_OK;
    if (e && e->builtin)
        st = pg__error(PG_ERROR_ARGUMENT, "pg_policy_register: '%s' is a built-in policy", name);
    else if (!e && count == MAX_POLICIES)
        st = pg__error(PG_ERROR_OUT_OF_MEMORY, "pg_policy_register: at most %d policies",
                       MAX_POLICIES);
    else {
        if (!e) {
            e = &table[count++];
            strcpy(e->name, name);
        }
        e->ops = *policy;
    }
    pthread_mutex_unlock(&mu);
    return st;
}

const char *pg__policy_names(void) {
    static char names[MAX_POLICIES * 66];
    pthread_mutex_lock(&mu);
    add_builtins();
    names[0] = '\0';
    for (int i = 0; i < count; i++) {
        if (i)
            strcat(names, ", ");
        strcat(names, table[i].name);
    }
    pthread_mutex_unlock(&mu);
    return names;
}

pg_status pg__policy_open(const char *name, int ndevices, pg__policy *out) {
    pthread_mutex_lock(&mu);
    add_builtins();
    entry *e = find(name);
    pg_device_policy ops;
    if (e)
        ops = e->ops;
    pthread_mutex_unlock(&mu);
    if (!e)
        return pg__error(PG_ERROR_ARGUMENT, "unknown policy '%s': expected one of %s", name,
                         pg__policy_names());
    memset(out, 0, sizeof *out);
    strcpy(out->name, name);
    out->ops = ops;
    if (ops.create && !(out->state = ops.create(ndevices)))
        return pg__error(PG_ERROR_OUT_OF_MEMORY, "policy '%s' could not create its state", name);
    return PG_OK;
}

void pg__policy_close(pg__policy *p) {
    if (p->ops.destroy && p->state)
        p->ops.destroy(p->state);
    p->state = NULL;
}
