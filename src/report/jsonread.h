/* Internal to the report module: a small, strict JSON reader (RFC 8259)
 * for simulator outputs.
 *
 * The whole text becomes a tree of nodes in one array; strings (decoded)
 * and number texts live in one text buffer. Parsing is iterative with an
 * explicit stack, so nesting costs no C stack; it stops at the limits
 * below. Errors are TESSEL_EPARSE with file:line:col (columns count bytes
 * from 1), or TESSEL_ENOMEM. Accepted beyond the RFC: a leading UTF-8 BOM.
 * Refused although the RFC allows it: "\u0000" (strings are C strings). */
#ifndef TESSEL_REPORT_JSONREAD_H
#define TESSEL_REPORT_JSONREAD_H

#include <stddef.h>
#include <stdint.h>

#include "tessel/base.h"

#define JSON_MAX_DEPTH 64u                   /* nested arrays and objects */
#define JSON_MAX_STRING ((size_t)1 << 20)    /* bytes of one decoded string or key */
#define JSON_MAX_NUMBER 64u                  /* characters of one number */
#define JSON_MAX_BYTES ((size_t)256 << 20)   /* size of the whole text */
#define JSON_NONE SIZE_MAX                   /* no node */

typedef enum json_type {
    JSON_NULL,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type;

typedef struct json_node {
    json_type type;
    uint32_t col, key_col;   /* where the value and its key (in an object) start */
    uint64_t line, key_line;
    size_t key;              /* offset of the member's key in text, or JSON_NONE */
    size_t value;            /* offset of a string's decoded text or a number's text */
    size_t first, next;      /* first child, next sibling (JSON_NONE: none) */
    size_t count;            /* children of an array or object */
} json_node;

typedef struct json_doc {
    const tessel_allocator *alloc;
    json_node *nodes;        /* nodes[0] is the root */
    size_t nnodes, cap;
    char *text;
    size_t text_used, text_cap;
} json_doc;

/* Parses data[0..size); `name` names the file in diagnostics. On error the
 * document is empty (json_free is still safe). */
int json_parse(const char *name, const void *data, size_t size, const tessel_allocator *a,
               json_doc *doc, tessel_diag *diag);
void json_free(json_doc *doc);

const json_node *json_root(const json_doc *doc);
/* The node at index i, or NULL for JSON_NONE. */
const json_node *json_at(const json_doc *doc, size_t i);
/* A member's key; "" for an array element. */
const char *json_key(const json_doc *doc, const json_node *n);
/* A string's decoded text or a number's text; "" otherwise. */
const char *json_text(const json_doc *doc, const json_node *n);
/* "a string", "an object", ... for messages. */
const char *json_type_name(json_type t);

#endif
