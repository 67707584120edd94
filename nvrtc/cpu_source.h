/* cpu_source.h: lexical helpers over kernel source for the CPU build and the signature
 * parser, on text that pg__signature_strip has blanked (comments and literals gone, offsets
 * and lines kept):
 * identifiers, whole-word search, line numbers, and the top-level declarations. */
#ifndef PG_CPU_SOURCE_H
#define PG_CPU_SOURCE_H

#include <stddef.h>

int pg__cpu_ident_char(int c);
/* Length of the identifier starting at s[i], 0 if none starts there (also when s[i] continues
 * an identifier that began earlier). */
size_t pg__cpu_ident_at(const char *s, size_t i);
/* Offset of the first whole-word occurrence of w in s[from, to), or (size_t)-1. */
size_t pg__cpu_find_word(const char *s, size_t from, size_t to, const char *w);
/* 1-based line number of offset at. */
int pg__cpu_line_of(const char *s, size_t at);
/* Offset just past the bracket that closes the one at s[i] ('(' '[' '{' '<'); 0 if unbalanced
 * (and for '<', when a ';' or brace comes first: a comparison, not a template list). */
size_t pg__cpu_match(const char *s, size_t i);

/* A top-level declaration or definition: [start, end). body is the offset of its first '{'
 * (end when it has none). namespace and extern "C" blocks are looked into, not units. */
typedef struct pg__cpu_unit {
    size_t start, body, end;
} pg__cpu_unit;

/* The units of code (preprocessor lines blanked), malloc'ed into *out. Returns their number, -1
 * when the braces do not balance, or -2 when memory ran out. */
int pg__cpu_units(const char *code, pg__cpu_unit **out);

#endif
