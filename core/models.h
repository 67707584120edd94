/* models.h: performance models (core/models.c). Owns rt->models, a device's queued_ns and
 * backlog_ns, a computation's pred_ns, est_ns. */
#ifndef PG_CORE_MODELS_H
#define PG_CORE_MODELS_H

#include "core/objects.h"

/* ---- performance models (core/models.c): durations per kernel, device class and size bucket */
uint64_t pg__model_bucket(uint64_t bytes);         /* bytes rounded down to a power of two (0: 0) */
uint64_t pg__models_args_bytes(const pg__comp *c); /* the bytes a model is keyed on */
/* A measured duration of `kernel` on device dev over `bytes` of arguments (warm-up and
 * spike rules apply); c finished, timed: its duration. */
void pg__models_sample(pg__runtime *rt, const char *kernel, int dev, uint64_t bytes, uint64_t ns);
void pg__models_note(pg__runtime *rt, const pg__comp *c);
/* The predicted duration in ns, -1 when unknown (fewer than 3 samples, or models off). */
/* Whether c, a kernel or task about to issue on dev, is timed for the models (always until its
 * model is full, then one launch in 16). */
int pg__models_want_timing(pg__runtime *rt, const pg__comp *c, int dev);
int64_t pg__models_predict(pg__runtime *rt, const char *kernel, int dev, uint64_t bytes);
/* c's duration on dev: the model's prediction when calibrated, else a cold estimate from its
 * threads (a task: its argument bytes) and the device's throughput class. Never 0. */
uint64_t pg__models_estimate_ns(pg__runtime *rt, const pg__comp *c, int dev);
/* The device's throughput class measured at start-up (simple threads per second), for weighing
 * devices before the models know a kernel. */
double pg__models_cold_rate(const pg__runtime *rt, int dev);
/* The devices' queued work: c's predicted and estimated durations are added to its device's
 * queued_ns and backlog_ns when it is issued there, and removed when it is seen finished. */
void pg__models_queue_add(pg__runtime *rt, pg__comp *c, int dev);
void pg__models_queue_done(pg__runtime *rt, pg__comp *c);
/* Each device's speed from the models: for every kernel and size bucket predicted on every
 * device, 1 / its predicted duration; speed[d] is their geometric mean. Returns how many such
 * (kernel, bucket) pairs there are: 0 (speeds untouched) while the models cannot compare all
 * devices. */
int pg__models_speed(pg__runtime *rt, double speed[PG_MAX_DEVICES]);
void pg__models_load(pg__runtime *rt);      /* at creation: device classes, then the files */
pg_status pg__models_save(pg__runtime *rt); /* at close: the files (atomic) */
void pg__models_free(pg__runtime *rt);

#endif
