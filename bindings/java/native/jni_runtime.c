/* jni_runtime.c: polygpu.Native's runtime, dtype and observability entry points. */
#include "jni_util.h"

#include <stdlib.h>
#include <string.h>

#define NLOC (PG_MAX_DEVICES + 1)

JNIEXPORT jint JNICALL Java_polygpu_Native_maxLocations(JNIEnv *env, jclass cls) {
    return NLOC;
}

JNIEXPORT jint JNICALL Java_polygpu_Native_dtypeParse(JNIEnv *env, jclass cls, jbyteArray name) {
    int failed;
    char *s = pgj_cstr(env, name, &failed);
    if (failed)
        return 0;
    pg_dtype t = PG_FLOAT32;
    pg_status st = pg_dtype_parse(s, &t);
    if (st)
        pgj_throw_status(env, st);
    free(s);
    return (jint)t;
}

/* pg_options_set copies each value: the C strings go as soon as they are set. */
JNIEXPORT jlong JNICALL Java_polygpu_Native_runtimeNew(JNIEnv *env, jclass cls, jobjectArray names,
                                                       jobjectArray values) {
    jsize n = (*env)->GetArrayLength(env, names);
    pg_options o;
    pg_options_init(&o);
    pg_runtime *rt = NULL;
    int ok = 1;
    for (jsize i = 0; ok && i < n; i++) {
        int failed = 0;
        jbyteArray name = (*env)->GetObjectArrayElement(env, names, i);
        jbyteArray value = (*env)->GetObjectArrayElement(env, values, i);
        char *k = pgj_cstr(env, name, &failed), *v = NULL;
        if (!failed)
            v = pgj_cstr(env, value, &failed);
        ok = !failed;
        (*env)->DeleteLocalRef(env, name);
        (*env)->DeleteLocalRef(env, value);
        if (ok) {
            pg_status st = pg_options_set(&o, k, v);
            if (st) {
                pgj_throw_status(env, st);
                ok = 0;
            }
        }
        free(k);
        free(v);
    }
    if (ok) {
        pg_status st = pg_runtime_new(&o, &rt);
        if (st) {
            pgj_throw_status(env, st);
            rt = NULL;
        }
    }
    return PGJ_HANDLE(rt);
}

JNIEXPORT void JNICALL Java_polygpu_Native_runtimeFree(JNIEnv *env, jclass cls, jlong rt) {
    pg_status st = pg_runtime_free(PGJ_PTR(pg_runtime, rt));
    if (st)
        pgj_throw_status(env, st);
}

JNIEXPORT void JNICALL Java_polygpu_Native_runtimeSync(JNIEnv *env, jclass cls, jlong rt) {
    pg_status st = pg_runtime_sync(PGJ_PTR(pg_runtime, rt));
    if (st)
        pgj_throw_status(env, st);
}

JNIEXPORT void JNICALL Java_polygpu_Native_runtimeSyncTimeout(JNIEnv *env, jclass cls, jlong rt,
                                                              jlong timeout_ns) {
    pg_status st = pg_runtime_sync_timeout(PGJ_PTR(pg_runtime, rt), (uint64_t)timeout_ns);
    if (st)
        pgj_throw_status(env, st);
}

/* Layout read by Stats: 8 counters, then link_bytes row-major, NLOC x NLOC. */
JNIEXPORT jlong JNICALL Java_polygpu_Native_runtimeClock(JNIEnv *env, jclass cls, jlong rt) {
    (void)cls;
    uint64_t ns = 0;
    pg_status st = pg_runtime_clock(PGJ_PTR(pg_runtime, rt), &ns);
    if (st) {
        pgj_throw_status(env, st);
        return 0;
    }
    return (jlong)ns;
}

JNIEXPORT jlongArray JNICALL Java_polygpu_Native_runtimeStats(JNIEnv *env, jclass cls, jlong rt) {
    pg_stats *s = malloc(sizeof *s);
    if (!s) {
        pgj_throw_message(env, PG_ERROR_OUT_OF_MEMORY, "out of host memory for the stats");
        return NULL;
    }
    pg_status st = pg_runtime_stats(PGJ_PTR(pg_runtime, rt), s);
    if (st) {
        pgj_throw_status(env, st);
        free(s);
        return NULL;
    }
    /* then per device the energy (J, negative: unknown) and the power (W, 0: unknown) as the
     * raw bits of doubles, PG_MAX_DEVICES of each; then the ranks: rank, nranks, messages sent
     * and received, bytes sent and received, cache hits */
    enum { R = 8 + NLOC * NLOC + 5 + 2 * PG_MAX_DEVICES, N = R + 7 };
    jlong v[N];
    v[0] = s->ndevices;
    v[1] = (jlong)s->computations;
    v[2] = (jlong)s->kernels;
    v[3] = (jlong)s->host_accesses;
    v[4] = (jlong)s->copies;
    v[5] = (jlong)s->bytes_moved;
    v[6] = (jlong)s->host_wait_ns;
    v[7] = (jlong)s->pending;
    for (int i = 0; i < NLOC; i++)
        for (int j = 0; j < NLOC; j++)
            v[8 + i * NLOC + j] = (jlong)s->link_bytes[i][j];
    v[8 + NLOC * NLOC] = (jlong)s->evictions;
    v[8 + NLOC * NLOC + 1] = (jlong)s->bytes_evicted;
    v[8 + NLOC * NLOC + 2] = (jlong)s->writebacks;
    v[8 + NLOC * NLOC + 3] = (jlong)s->copies_elided;
    v[8 + NLOC * NLOC + 4] = (jlong)s->bytes_elided;
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        memcpy(&v[8 + NLOC * NLOC + 5 + d], &s->energy_joules[d], sizeof(double));
        memcpy(&v[8 + NLOC * NLOC + 5 + PG_MAX_DEVICES + d], &s->power_watts[d], sizeof(double));
    }
    v[R] = s->rank;
    v[R + 1] = s->nranks;
    v[R + 2] = (jlong)s->rank_messages_sent;
    v[R + 3] = (jlong)s->rank_messages_received;
    v[R + 4] = (jlong)s->rank_bytes_sent;
    v[R + 5] = (jlong)s->rank_bytes_received;
    v[R + 6] = (jlong)s->rank_cache_hits;
    free(s);
    jlongArray out = (*env)->NewLongArray(env, N);
    if (out)
        (*env)->SetLongArrayRegion(env, out, 0, N, v);
    return out;
}

/* Layout read by PowerChoice: limit W, used W, from models (1/0), ndevices, nchosen, then
 * PG_MAX_DEVICES chosen ids (nchosen used), PG_MAX_DEVICES watts, PG_MAX_DEVICES performances. */
JNIEXPORT jdoubleArray JNICALL Java_polygpu_Native_runtimePowerChoice(JNIEnv *env, jclass cls,
                                                                      jlong rt) {
    (void)cls;
    pg_power_choice c;
    pg_status st = pg_runtime_power_choice(PGJ_PTR(pg_runtime, rt), &c);
    if (st) {
        pgj_throw_status(env, st);
        return NULL;
    }
    enum { N = 5 + 3 * PG_MAX_DEVICES };
    jdouble v[N] = {c.limit_watts, c.used_watts, c.from_models, c.ndevices, c.nchosen};
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        v[5 + d] = d < c.nchosen ? c.chosen[d] : -1;
        v[5 + PG_MAX_DEVICES + d] = c.watts[d];
        v[5 + 2 * PG_MAX_DEVICES + d] = c.performance[d];
    }
    jdoubleArray out = (*env)->NewDoubleArray(env, N);
    if (out)
        (*env)->SetDoubleArrayRegion(env, out, 0, N, v);
    return out;
}

/* {rank, nranks}. */
JNIEXPORT jintArray JNICALL Java_polygpu_Native_runtimeRanks(JNIEnv *env, jclass cls, jlong rt) {
    int v[2] = {0, 1};
    pg_status st = pg_runtime_ranks(PGJ_PTR(pg_runtime, rt), &v[0], &v[1]);
    if (st) {
        pgj_throw_status(env, st);
        return NULL;
    }
    jintArray out = (*env)->NewIntArray(env, 2);
    if (out)
        (*env)->SetIntArrayRegion(env, out, 0, 2, (const jint *)v);
    return out;
}

JNIEXPORT jint JNICALL Java_polygpu_Native_rankBlockOwner(JNIEnv *env, jclass cls, jint i, jint n,
                                                          jint nranks) {
    return pg_rank_block_owner(i, n, nranks);
}

JNIEXPORT jboolean JNICALL Java_polygpu_Native_ranksActive(JNIEnv *env, jclass cls) {
    return pg_ranks_active() ? JNI_TRUE : JNI_FALSE;
}

/* An uncaught exception on one of several ranks (Runtime's handler): end every rank. */
JNIEXPORT void JNICALL Java_polygpu_Native_ranksAbort(JNIEnv *env, jclass cls, jint code,
                                                      jbyteArray why) {
    char msg[1024] = "uncaught exception";
    if (why) {
        jsize n = (*env)->GetArrayLength(env, why);
        if (n > (jsize)sizeof msg - 1)
            n = (jsize)sizeof msg - 1;
        (*env)->GetByteArrayRegion(env, why, 0, n, (jbyte *)msg);
        msg[n] = 0;
    }
    pg_ranks_abort(code, msg);
}

/* Per device, in a long[]: id, kind, memory, major, minor, multiprocessors, max threads per
 * block, max block x y z, max grid x y z, max shared memory per block (Runtime.devices reads
 * them in this order). */
#define DEVICE_FIELDS 14

/* {long[] (DEVICE_FIELDS per device), String[] names}. */
JNIEXPORT jobjectArray JNICALL Java_polygpu_Native_runtimeDevices(JNIEnv *env, jclass cls,
                                                                  jlong rt) {
    pg_device_info info[PG_MAX_DEVICES];
    int count = 0;
    pg_status st = pg_runtime_devices(PGJ_PTR(pg_runtime, rt), info, PG_MAX_DEVICES, &count);
    if (st) {
        pgj_throw_status(env, st);
        return NULL;
    }
    if (count > PG_MAX_DEVICES)
        count = PG_MAX_DEVICES;
    jclass string_class = (*env)->FindClass(env, "java/lang/String");
    jclass object_class = (*env)->FindClass(env, "java/lang/Object");
    if (!string_class || !object_class)
        return NULL;
    jlong nums[PG_MAX_DEVICES * DEVICE_FIELDS];
    jlongArray jnums = (*env)->NewLongArray(env, count * DEVICE_FIELDS);
    jobjectArray names = (*env)->NewObjectArray(env, count, string_class, NULL);
    jobjectArray out = (*env)->NewObjectArray(env, 2, object_class, NULL);
    if (!jnums || !names || !out)
        return NULL;
    for (int d = 0; d < count; d++) {
        const pg_device_info *i = &info[d];
        jlong *n = &nums[d * DEVICE_FIELDS];
        n[0] = i->id;
        n[1] = i->device_class == PG_CLASS_GPU ? 1 : 0; /* what the registry says */
        n[2] = (jlong)i->memory_bytes;
        n[3] = i->compute_major;
        n[4] = i->compute_minor;
        n[5] = i->multiprocessors;
        n[6] = i->max_threads_per_block;
        n[7] = i->max_block.x;
        n[8] = i->max_block.y;
        n[9] = i->max_block.z;
        n[10] = i->max_grid.x;
        n[11] = i->max_grid.y;
        n[12] = i->max_grid.z;
        n[13] = (jlong)i->max_shared_memory_per_block;
        info[d].name[sizeof info[d].name - 1] = '\0';
        jstring name = pgj_string(env, info[d].name);
        if (!name)
            return NULL;
        (*env)->SetObjectArrayElement(env, names, d, name);
        (*env)->DeleteLocalRef(env, name);
    }
    (*env)->SetLongArrayRegion(env, jnums, 0, count * DEVICE_FIELDS, nums);
    (*env)->SetObjectArrayElement(env, out, 0, jnums);
    (*env)->SetObjectArrayElement(env, out, 1, names);
    return out;
}

JNIEXPORT jstring JNICALL Java_polygpu_Native_dagString(JNIEnv *env, jclass cls, jlong rt,
                                                        jint format) {
    char *s = NULL;
    pg_status st = pg_dag_export_string(PGJ_PTR(pg_runtime, rt), (pg_dag_format)format, &s);
    if (st) {
        pgj_throw_status(env, st);
        return NULL;
    }
    jstring out = pgj_string(env, s);
    pg_string_free(s);
    return out;
}

JNIEXPORT jstring JNICALL Java_polygpu_Native_nodeStatus(JNIEnv *env, jclass cls) {
    (void)cls;
    char *s = NULL;
    pg_status st = pg_node_status(&s);
    if (st) {
        pgj_throw_status(env, st);
        return NULL;
    }
    jstring out = pgj_string(env, s);
    pg_string_free(s);
    return out;
}

JNIEXPORT void JNICALL Java_polygpu_Native_dagExport(JNIEnv *env, jclass cls, jlong rt, jint format,
                                                     jbyteArray path) {
    int failed;
    char *p = pgj_cstr(env, path, &failed);
    if (failed)
        return;
    pg_status st = pg_dag_export(PGJ_PTR(pg_runtime, rt), (pg_dag_format)format, p);
    if (st)
        pgj_throw_status(env, st);
    free(p);
}

JNIEXPORT void JNICALL Java_polygpu_Native_traceWrite(JNIEnv *env, jclass cls, jlong rt,
                                                      jbyteArray path) {
    int failed;
    char *p = pgj_cstr(env, path, &failed);
    if (failed)
        return;
    pg_status st = pg_trace_write(PGJ_PTR(pg_runtime, rt), p);
    if (st)
        pgj_throw_status(env, st);
    free(p);
}

/* {long[] (bytes, median ns, samples per model), String[] kernels, String[] device classes}
 * (Runtime.models reads them in this order). */
#define MODEL_FIELDS 3

JNIEXPORT jobjectArray JNICALL Java_polygpu_Native_runtimeModels(JNIEnv *env, jclass cls,
                                                                 jlong rt) {
    (void)cls;
    pg_runtime *r = PGJ_PTR(pg_runtime, rt);
    int count = 0;
    pg_status st = pg_runtime_models(r, &count);
    if (st) {
        pgj_throw_status(env, st);
        return NULL;
    }
    jclass string_class = (*env)->FindClass(env, "java/lang/String");
    jclass object_class = (*env)->FindClass(env, "java/lang/Object");
    if (!string_class || !object_class)
        return NULL;
    jlongArray jnums = (*env)->NewLongArray(env, count * MODEL_FIELDS);
    jobjectArray kernels = (*env)->NewObjectArray(env, count, string_class, NULL);
    jobjectArray classes = (*env)->NewObjectArray(env, count, string_class, NULL);
    jobjectArray out = (*env)->NewObjectArray(env, 3, object_class, NULL);
    if (!jnums || !kernels || !classes || !out)
        return NULL;
    for (int i = 0; i < count; i++) {
        pg_model_info m;
        if ((st = pg_runtime_model(r, i, &m)) != PG_OK) {
            pgj_throw_status(env, st);
            return NULL;
        }
        m.kernel[sizeof m.kernel - 1] = '\0';
        m.device_class[sizeof m.device_class - 1] = '\0';
        jlong n[MODEL_FIELDS] = {(jlong)m.bytes, (jlong)m.median_ns, (jlong)m.samples};
        (*env)->SetLongArrayRegion(env, jnums, i * MODEL_FIELDS, MODEL_FIELDS, n);
        jstring k = pgj_string(env, m.kernel);
        if (!k)
            return NULL;
        (*env)->SetObjectArrayElement(env, kernels, i, k);
        (*env)->DeleteLocalRef(env, k);
        jstring c = pgj_string(env, m.device_class);
        if (!c)
            return NULL;
        (*env)->SetObjectArrayElement(env, classes, i, c);
        (*env)->DeleteLocalRef(env, c);
    }
    (*env)->SetObjectArrayElement(env, out, 0, jnums);
    (*env)->SetObjectArrayElement(env, out, 1, kernels);
    (*env)->SetObjectArrayElement(env, out, 2, classes);
    return out;
}
