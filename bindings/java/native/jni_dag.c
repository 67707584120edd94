/* jni_dag.c: a snapshot of the runtime's DAG (pg_dag_snapshot) handed to Java as plain arrays,
 * from which polygpu.Dag builds its records. */
#include "jni_util.h"

#include <stdlib.h>

/* Numbers per vertex, in the order Dag.java reads them. */
#define PER_VERTEX 14

static jlongArray long_array(JNIEnv *env, const jlong *v, size_t n) {
    jlongArray a = (*env)->NewLongArray(env, (jsize)n);
    if (a && n)
        (*env)->SetLongArrayRegion(env, a, 0, (jsize)n, v);
    return a;
}

/* Fill the arrays from the snapshot; 0 with an exception pending on failure. */
static int fill(JNIEnv *env, const pg_dag *g, size_t nv, size_t ne, jlong *nums, jlong *args,
                jlong *edges, jobjectArray names) {
    size_t a = 0;
    for (size_t i = 0; i < nv; i++) {
        pg_dag_vertex_info v;
        pg_status st = pg_dag_vertex(g, i, &v);
        if (st) {
            pgj_throw_status(env, st);
            return 0;
        }
        jlong *n = &nums[i * PER_VERTEX];
        n[0] = (jlong)v.id;
        n[1] = v.kind;
        n[2] = v.device;
        n[3] = v.stream;
        n[4] = v.nargs;
        n[5] = (jlong)v.submit_ns;
        n[6] = (jlong)v.start_ns;
        n[7] = (jlong)v.end_ns;
        n[8] = (jlong)v.bytes;
        n[9] = v.src;
        n[10] = v.dst;
        n[11] = v.rank;
        n[12] = v.part; /* a part of a launch split over devices: 1..parts; 0 0 not */
        n[13] = v.parts;
        for (int j = 0; j < v.nargs; j++, a++) {
            args[2 * a] = (jlong)v.args[j].array;
            args[2 * a + 1] = v.args[j].access;
        }
        jstring name = pgj_string(env, v.name);
        if (!name)
            return 0;
        (*env)->SetObjectArrayElement(env, names, (jsize)i, name);
        (*env)->DeleteLocalRef(env, name);
    }
    for (size_t i = 0; i < ne; i++) {
        uint64_t from, to;
        pg_status st = pg_dag_edge(g, i, &from, &to);
        if (st) {
            pgj_throw_status(env, st);
            return 0;
        }
        edges[2 * i] = (jlong)from;
        edges[2 * i + 1] = (jlong)to;
    }
    return 1;
}

/* {long[] PER_VERTEX per vertex (id, kind, device, stream, nargs, submit_ns, start_ns, end_ns,
 * bytes, src, dst, rank, part, parts), String[] names, long[] (array, access) per argument of every
 * vertex in order, long[] (from, to) per edge}. */
JNIEXPORT jobjectArray JNICALL Java_polygpu_Native_dagSnapshot(JNIEnv *env, jclass cls, jlong rt) {
    pg_dag *g = NULL;
    size_t nv = 0, ne = 0, na = 0;
    pg_status st = pg_dag_snapshot(PGJ_PTR(pg_runtime, rt), &g);
    if (!st)
        st = pg_dag_vertex_count(g, &nv);
    if (!st)
        st = pg_dag_edge_count(g, &ne);
    for (size_t i = 0; !st && i < nv; i++) {
        pg_dag_vertex_info v;
        st = pg_dag_vertex(g, i, &v);
        na += st ? 0 : (size_t)v.nargs;
    }
    if (st) {
        pgj_throw_status(env, st);
        pg_dag_free(g);
        return NULL;
    }
    jobjectArray out = NULL;
    jlong *nums = malloc((nv * PER_VERTEX + 1) * sizeof *nums);
    jlong *args = malloc((na * 2 + 1) * sizeof *args);
    jlong *edges = malloc((ne * 2 + 1) * sizeof *edges);
    jclass string_class = (*env)->FindClass(env, "java/lang/String");
    jclass object_class = string_class ? (*env)->FindClass(env, "java/lang/Object") : NULL;
    if (!nums || !args || !edges) {
        if (object_class)
            pgj_throw_message(env, PG_ERROR_OUT_OF_MEMORY, "out of host memory for the DAG");
    } else if (object_class) {
        jobjectArray names = (*env)->NewObjectArray(env, (jsize)nv, string_class, NULL);
        if (names && fill(env, g, nv, ne, nums, args, edges, names)) {
            jlongArray jn = long_array(env, nums, nv * PER_VERTEX);
            jlongArray ja = jn ? long_array(env, args, na * 2) : NULL;
            jlongArray je = ja ? long_array(env, edges, ne * 2) : NULL;
            out = je ? (*env)->NewObjectArray(env, 4, object_class, NULL) : NULL;
            if (out) {
                (*env)->SetObjectArrayElement(env, out, 0, jn);
                (*env)->SetObjectArrayElement(env, out, 1, names);
                (*env)->SetObjectArrayElement(env, out, 2, ja);
                (*env)->SetObjectArrayElement(env, out, 3, je);
            }
        }
    }
    free(nums);
    free(args);
    free(edges);
    pg_dag_free(g);
    return out;
}
