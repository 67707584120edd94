/* jni_graph.c: polygpu.Native's recording entry points (pg_graph_*). */
#include "jni_util.h"

JNIEXPORT void JNICALL Java_polygpu_Native_graphBegin(JNIEnv *env, jclass cls, jlong rt) {
    pg_status st = pg_graph_begin(PGJ_PTR(pg_runtime, rt));
    if (st)
        pgj_throw_status(env, st);
}

JNIEXPORT jlong JNICALL Java_polygpu_Native_graphEnd(JNIEnv *env, jclass cls, jlong rt) {
    pg_graph *g = NULL;
    pg_status st = pg_graph_end(PGJ_PTR(pg_runtime, rt), &g);
    if (st) {
        pgj_throw_status(env, st);
        return 0;
    }
    return PGJ_HANDLE(g);
}

JNIEXPORT void JNICALL Java_polygpu_Native_graphLaunch(JNIEnv *env, jclass cls, jlong g) {
    pg_status st = pg_graph_launch(PGJ_PTR(pg_graph, g));
    if (st)
        pgj_throw_status(env, st);
}

JNIEXPORT jlong JNICALL Java_polygpu_Native_graphCalls(JNIEnv *env, jclass cls, jlong g) {
    int64_t n = 0;
    pg_status st = pg_graph_calls(PGJ_PTR(pg_graph, g), &n);
    if (st)
        pgj_throw_status(env, st);
    return (jlong)n;
}

JNIEXPORT void JNICALL Java_polygpu_Native_graphFree(JNIEnv *env, jclass cls, jlong g) {
    pg_status st = pg_graph_free(PGJ_PTR(pg_graph, g));
    if (st)
        pgj_throw_status(env, st);
}
