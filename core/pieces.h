/* pieces.h: views and pieces (core/pieces.c): which pieces hold an array's state, cuts and merges,
 * a launch's arguments expanded to pieces. Owns pieces, npieces, one, users, superseded, view_ends,
 * merge_due of arrays. */
#ifndef PG_CORE_PIECES_H
#define PG_CORE_PIECES_H

#include "core/objects.h"

/* ---- pieces (core/pieces.c) */
/* The pieces holding the state of a (a root or a view): a span of the root's pieces, or the
 * root itself while it was never cut. */
void pg__array_parts(pg__array *a, pg__array ***parts, int *n);
/* The piece of root r holding element e (r cut or not). */
pg__array *pg__array_piece_at(pg__array *r, uint64_t e);
/* A user handle of root or view a is gone: its root loses a user; the last one lets the pieces
 * go (each goes when no computation uses it). */
void pg__array_user_gone(pg__array *a);
/* View v is gone (its last reference): its ends no longer keep its root's cuts, so the pieces
 * on either side may merge back at the next launch on the root (pg__comp_expand_pieces). */
void pg__pieces_view_gone(pg__array *v);
/* The kernel's arguments (roots and views, deduplicated) replaced by the pieces they cover,
 * accesses merged per piece, slot map updated: at submission, so that a recording made before
 * a cut replays over the pieces of then. */
pg_status pg__comp_expand_pieces(pg__runtime *rt, pg__comp *c);
/* Make element `at` of root r the start of a piece (a no-op at 0, at the end, or where a cut
 * is already); refused while the piece there is mapped or held back behind a mapping. */
pg_status pg__array_cut(pg__runtime *rt, pg__array *r, uint64_t at);

#endif
