/* sim_text.h: reading the simulator's text files — a whole small file, lines split into words or
 * CSV fields, numbers and byte counts. */
#ifndef PG_SIM_TEXT_H
#define PG_SIM_TEXT_H

#include "polygpu.h"

#include <stddef.h>
#include <stdint.h>

/* A regular file of at most max_bytes, read whole: *text malloc'ed and NUL-terminated. `what`
 * names it in errors ("topology file"). */
pg_status pg__sim_read_file(const char *path, const char *what, size_t max_bytes, char **text,
                            size_t *len);

/* The next line of text[*at..len) (NUL-terminated in place, its '\n' or "\r\n" removed); NULL at
 * the end. */
char *pg__sim_next_line(char *text, size_t len, size_t *at);

/* Words of line (changed in place): separated by blanks; a "double quoted" part (anywhere in a
 * word: name="A B") holds blanks and loses its quotes; a '#' outside quotes ends the line. -1
 * (why set) on an unclosed quote or more than max words. */
int pg__sim_words(char *line, char **word, int max, const char **why);

/* CSV fields of line (changed in place): comma-separated, a field "quoted" to hold commas, ""
 * for a quote inside. -1 (why set) on a bad quote or more than max fields. */
int pg__sim_csv(char *line, char **field, int max, const char **why);

/* A finite number; 0 on success. */
int pg__sim_number(const char *s, double *out);
/* A byte count: digits with an optional binary suffix K, M, G, T (e.g. 80G); 0 on success. */
int pg__sim_bytes(const char *s, uint64_t *out);

#endif
