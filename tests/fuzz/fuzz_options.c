/* fuzz_options.c: fuzz harness of runtime options as text: pg_options_set on each "name=value"
 * line of the input, then pg__options_resolve (the checks pg_runtime_new makes before it opens
 * any device: devices=, byte counts, numbers, power_watts, ...), the policy named, and for
 * devices=sim:... the spec of the simulated machine (preset or file, and its options).
 * Input: lines "name=value" (a line without '=' is a name with an empty value). */
#include "core/options.h"
#include "devices/sim/sim_spec.h"
#include "policies/registry.h"
#include "tests/fuzz/fuzz.h"

#include <math.h>

/* Options that name files the runtime writes (trace, profile) are checked by opening them for
 * writing: the fuzzer's paths must not create files, so those two are left out. */
static int writes_files(const char *name) {
    return !strcmp(name, "trace") || !strcmp(name, "profile");
}

/* The field of a text option (as pg_options_set keeps it), NULL for the others. */
static const char **text_option(pg_options *o, const char *name) {
    static const struct {
        const char *name;
        size_t offset;
    } fields[] = {
        {"devices", offsetof(pg_options, devices)},
        {"policy", offsetof(pg_options, policy)},
        {"stream_policy", offsetof(pg_options, stream_policy)},
        {"parent_stream_policy", offsetof(pg_options, parent_stream_policy)},
        {"execution", offsetof(pg_options, execution)},
        {"interconnect", offsetof(pg_options, interconnect)},
        {"log", offsetof(pg_options, log)},
        {"cache_dir", offsetof(pg_options, cache_dir)},
        {"check", offsetof(pg_options, check)},
        {"models", offsetof(pg_options, models)},
        {"power_watts", offsetof(pg_options, power_watts)},
        {"ranks", offsetof(pg_options, ranks)},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!strcmp(name, fields[i].name))
            return (const char **)((char *)o + fields[i].offset);
    return NULL;
}

int pg_fuzz_options(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    pg_options o;
    pg_options_init(&o);
    for (char *line = buf, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *eq = strchr(line, '=');
        const char *value = "";
        if (eq) {
            *eq = '\0';
            value = eq + 1;
        }
        if (writes_files(line))
            continue;
        /* A text option is only interned by pg_options_set (one copy per distinct value, kept
         * for the process: millions of fuzzed values would fill memory); it is checked when
         * resolved, so it is set here directly. */
        const char **text = text_option(&o, line);
        if (text) {
            *text = value;
            continue;
        }
        pg_status st = pg_options_set(&o, line, value);
        if (st)
            pg_fuzz_check_error(st);
    }
    pg__options_resolved *r = malloc(sizeof *r);
    if (r) {
        pg_status st = pg__options_resolve(&o, r);
        if (st == PG_OK) {
            /* Every text resolved fits its field, and the numbers are what the runtime takes. */
            FUZZ_ASSERT(memchr(r->devices, '\0', sizeof r->devices) && r->devices[0]);
            FUZZ_ASSERT(memchr(r->policy, '\0', sizeof r->policy));
            FUZZ_ASSERT(memchr(r->cache_dir, '\0', sizeof r->cache_dir));
            FUZZ_ASSERT(r->exploration_threshold >= 0 && r->exploration_threshold <= 1);
            FUZZ_ASSERT(r->power_limit >= 0 && isfinite(r->power_limit));
            FUZZ_ASSERT(r->log >= 0 && r->log <= 2);
            pg__policy pol;
            st = pg__policy_open(r->policy, 4, &pol);
            if (st == PG_OK)
                pg__policy_close(&pol);
            else
                pg_fuzz_check_error(st);
            if (!strncmp(r->devices, "sim:", 4)) {
                pg__sim_spec *spec = malloc(sizeof *spec);
                if (spec) {
                    st = pg__sim_spec_parse(r->devices + 4, spec);
                    if (st == PG_OK)
                        FUZZ_ASSERT(spec->topo[0] && spec->host_time >= 0 &&
                                    isfinite(spec->host_time));
                    else
                        pg_fuzz_check_error(st);
                    free(spec);
                }
            }
        } else {
            pg_fuzz_check_error(st);
        }
        free(r);
    }
    free(buf);
    return 0;
}
