/* jni_linalg.c: the tiled GEMM (pg_linalg_gemm) for polygpu.Linalg; the report comes back as a
 * flat double[] that GemmReport reads (the layout is below, in one place). */
#include "jni_util.h"

#include <string.h>

/* [0] device mask, [1] devices, [2] tile, [3] tiles, [4] predicted_s, [5] predicted_j (< 0
 * unknown), [6] from_models, then rows per device [7, 7 + PG_MAX_DEVICES), then the GEMM rate
 * per device. */
enum { REPORT_HEAD = 7, REPORT_LEN = REPORT_HEAD + 2 * PG_MAX_DEVICES };

JNIEXPORT jdoubleArray JNICALL Java_polygpu_Native_linalgGemm(
    JNIEnv *env, jclass cls, jlong rt, jlong a, jlong b, jlong c, jdouble alpha, jdouble beta,
    jboolean trans_a, jboolean trans_b, jint devices, jlong tile, jint metric) {
    (void)cls;
    pg_gemm_options o;
    pg_gemm_options_init(&o);
    o.alpha = alpha;
    o.beta = beta;
    o.trans_a = trans_a != JNI_FALSE;
    o.trans_b = trans_b != JNI_FALSE;
    o.devices = (uint32_t)devices;
    o.tile = tile;
    o.metric = (pg_gemm_metric)metric;
    pg_gemm_report r;
    pg_status st = pg_linalg_gemm(PGJ_PTR(pg_runtime, rt), PGJ_PTR(pg_array, a),
                                  PGJ_PTR(pg_array, b), PGJ_PTR(pg_array, c), &o, &r);
    if (st) {
        pgj_throw_status(env, st);
        return NULL;
    }
    jdouble v[REPORT_LEN];
    memset(v, 0, sizeof v);
    v[0] = (jdouble)r.devices;
    v[1] = r.ndevices;
    v[2] = (jdouble)r.tile;
    v[3] = (jdouble)r.tiles;
    v[4] = r.predicted_s;
    v[5] = r.predicted_j;
    v[6] = r.from_models;
    for (int d = 0; d < PG_MAX_DEVICES; d++) {
        v[REPORT_HEAD + d] = (jdouble)r.rows[d];
        v[REPORT_HEAD + PG_MAX_DEVICES + d] = r.gflops[d];
    }
    jdoubleArray out = (*env)->NewDoubleArray(env, REPORT_LEN);
    if (out)
        (*env)->SetDoubleArrayRegion(env, out, 0, REPORT_LEN, v);
    return out;
}
