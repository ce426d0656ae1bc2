/* A strict JSON reader for simulator outputs (see jsonread.h).
 *
 * One pass over the text with an explicit stack of open containers: a
 * value is read, attached to the innermost open container, and then the
 * reader expects a separator or the container's end. Every node records
 * where it starts, so callers can point at a field in their messages. */
#include "jsonread.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct open_container {
    size_t node; /* the array or object */
    size_t last; /* its last child so far, or JSON_NONE */
} open_container;

typedef struct json_parser {
    json_doc *doc;
    const char *name;
    const unsigned char *s;
    size_t size, pos;
    uint64_t line;
    size_t line_start;
    tessel_diag *diag;
    open_container stack[JSON_MAX_DEPTH];
    unsigned depth;
    /* The key read for the next value of an object. */
    size_t key;
    uint64_t key_line;
    uint32_t key_col;
} json_parser;

/* ------------------------------------------------------------------ */
/* Positions and errors. */

static uint32_t column_at(const json_parser *p, size_t pos)
{
    size_t c = pos - p->line_start + 1;
    return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

static int error_at(json_parser *p, size_t pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int error_at(json_parser *p, size_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = tessel_diag_vset(p->diag, TESSEL_EPARSE, p->name, p->line, column_at(p, pos), NULL,
                              fmt, ap);
    va_end(ap);
    return rc;
}

static int out_of_memory(json_parser *p)
{
    return tessel_diag_set(p->diag, TESSEL_ENOMEM, p->name, 0, 0, NULL, "out of memory");
}

/* What stands at p->pos, for "expected X, found Y" messages. */
static int unexpected(json_parser *p, const char *expected)
{
    if (p->pos >= p->size)
        return error_at(p, p->pos, "unexpected end of data, expected %s", expected);
    unsigned char c = p->s[p->pos];
    if (c == '\0')
        return error_at(p, p->pos, "NUL byte where %s was expected", expected);
    if (c >= 0x21 && c <= 0x7E)
        return error_at(p, p->pos, "expected %s, found '%c'", expected, c);
    return error_at(p, p->pos, "expected %s, found byte 0x%02X", expected, c);
}

static void skip_blanks(json_parser *p)
{
    while (p->pos < p->size) {
        unsigned char c = p->s[p->pos];
        if (c == '\n') {
            p->pos++;
            p->line++;
            p->line_start = p->pos;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            p->pos++;
        } else {
            break;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Storage. */

static int reserve_text(json_parser *p, size_t more)
{
    json_doc *d = p->doc;
    if (more <= d->text_cap - d->text_used)
        return 0;
    if (more > SIZE_MAX / 4 - d->text_used)
        return out_of_memory(p);
    size_t cap = d->text_cap ? 2 * d->text_cap : 4096;
    if (cap < d->text_used + more)
        cap = d->text_used + more;
    char *grown = tessel_realloc_array(d->alloc, d->text, cap, 1);
    if (!grown)
        return out_of_memory(p);
    d->text = grown;
    d->text_cap = cap;
    return 0;
}

/* A new node of `type` starting at p->pos, attached to the innermost open
 * container with the pending key; *index receives it. */
static int add_node(json_parser *p, json_type type, size_t *index)
{
    json_doc *d = p->doc;
    if (d->nnodes == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 256;
        json_node *grown = tessel_realloc_array(d->alloc, d->nodes, cap, sizeof(*grown));
        if (!grown)
            return out_of_memory(p);
        d->nodes = grown;
        d->cap = cap;
    }
    size_t i = d->nnodes++;
    json_node *n = &d->nodes[i];
    memset(n, 0, sizeof(*n));
    n->type = type;
    n->line = p->line;
    n->col = column_at(p, p->pos);
    n->key = p->key;
    n->key_line = p->key_line;
    n->key_col = p->key_col;
    n->value = JSON_NONE;
    n->first = n->next = JSON_NONE;
    p->key = JSON_NONE;
    if (p->depth) {
        open_container *c = &p->stack[p->depth - 1];
        if (c->last == JSON_NONE)
            d->nodes[c->node].first = i;
        else
            d->nodes[c->last].next = i;
        c->last = i;
        d->nodes[c->node].count++;
    }
    *index = i;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Strings. */

static int hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Four hex digits at pos (after "\u"); -1 when they are not. */
static long read_hex4(const json_parser *p, size_t pos)
{
    if (p->size - pos < 4)
        return -1;
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_digit(p->s[pos + (size_t)i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

static size_t put_utf8(char *out, unsigned long cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Bytes of the well-formed UTF-8 sequence at pos (2 to 4), or 0. */
static size_t utf8_length(const json_parser *p, size_t pos)
{
    const unsigned char *s = p->s + pos;
    size_t left = p->size - pos;
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4;
    else
        return 0;
    if (c == 0xE0)
        lo = 0xA0; /* no overlong forms */
    else if (c == 0xED)
        hi = 0x9F; /* no surrogates */
    else if (c == 0xF0)
        lo = 0x90;
    else if (c == 0xF4)
        hi = 0x8F; /* nothing above U+10FFFF */
    if (left < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* An escape at p->pos (the backslash); appends its bytes at *out. */
static int read_escape(json_parser *p, char *out, size_t *len)
{
    size_t at = p->pos;
    if (p->size - at < 2)
        return error_at(p, at, "unterminated escape sequence");
    unsigned char e = p->s[at + 1];
    const char *simple = "\"\"\\\\//b\bf\fn\nr\rt\t";
    for (const char *m = simple; *m; m += 2)
        if ((unsigned char)m[0] == e) {
            out[(*len)++] = m[1];
            p->pos += 2;
            return 0;
        }
    if (e != 'u')
        return error_at(p, at, "invalid escape '\\%c' (JSON allows \\\" \\\\ \\/ \\b \\f \\n \\r "
                                   "\\t \\uXXXX)",
                        e >= 0x21 && e <= 0x7E ? e : '?');
    long cp = read_hex4(p, at + 2);
    if (cp < 0)
        return error_at(p, at, "\\u needs four hex digits");
    size_t used = 6;
    if (cp >= 0xDC00 && cp <= 0xDFFF)
        return error_at(p, at, "\\u%04lX is a low surrogate without a high one", (unsigned long)cp);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        long low = p->size - at >= 12 && p->s[at + 6] == '\\' && p->s[at + 7] == 'u'
                       ? read_hex4(p, at + 8)
                       : -1;
        if (low < 0xDC00 || low > 0xDFFF)
            return error_at(p, at, "\\u%04lX is a high surrogate without a low one",
                            (unsigned long)cp);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        used = 12;
    }
    if (cp == 0)
        return error_at(p, at, "\\u0000 is not supported (a NUL inside a string)");
    *len += put_utf8(out + *len, (unsigned long)cp);
    p->pos += used;
    return 0;
}

/* The string at p->pos (its opening quote), decoded into the text buffer;
 * *offset receives where. */
static int read_string(json_parser *p, size_t *offset)
{
    size_t start = p->pos;
    /* Find the closing quote first: the decoded text is never longer than
     * the raw one, so one reservation holds it. */
    size_t end = start + 1;
    while (end < p->size && p->s[end] != '"')
        end += p->s[end] == '\\' ? 2 : 1;
    if (end >= p->size)
        return error_at(p, start, "unterminated string (it starts here)");
    size_t raw = end - start - 1;
    if (raw > 6 * JSON_MAX_STRING)
        return error_at(p, start, "string longer than %zu bytes", JSON_MAX_STRING);
    int rc = reserve_text(p, raw + 1);
    if (rc)
        return rc;
    char *out = p->doc->text + p->doc->text_used;
    size_t len = 0;
    p->pos = start + 1;
    while (p->pos < end) {
        unsigned char c = p->s[p->pos];
        if (c == '\\') {
            rc = read_escape(p, out, &len);
            if (rc)
                return rc;
        } else if (c < 0x20) {
            return error_at(p, p->pos, c == '\0' ? "NUL byte inside a string"
                                                 : "control character 0x%02X inside a string "
                                                   "(write it as an escape)",
                            c);
        } else if (c < 0x80) {
            out[len++] = (char)c;
            p->pos++;
        } else {
            size_t n = utf8_length(p, p->pos);
            if (!n)
                return error_at(p, p->pos, "invalid UTF-8 byte 0x%02X inside a string", c);
            memcpy(out + len, p->s + p->pos, n);
            len += n;
            p->pos += n;
        }
    }
    if (len > JSON_MAX_STRING)
        return error_at(p, start, "string longer than %zu bytes", JSON_MAX_STRING);
    out[len] = '\0';
    *offset = p->doc->text_used;
    p->doc->text_used += len + 1;
    p->pos = end + 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Scalars. */

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int read_number(json_parser *p, size_t node)
{
    size_t start = p->pos, i = start;
    const unsigned char *s = p->s;
    if (i < p->size && s[i] == '-')
        i++;
    if (i >= p->size || !is_digit(s[i]))
        return error_at(p, i, "a number needs a digit here");
    if (s[i] == '0') {
        i++;
        if (i < p->size && is_digit(s[i]))
            return error_at(p, start, "a number cannot start with 0 followed by digits");
    } else {
        while (i < p->size && is_digit(s[i]))
            i++;
    }
    if (i < p->size && s[i] == '.') {
        i++;
        if (i >= p->size || !is_digit(s[i]))
            return error_at(p, i, "a decimal point needs digits after it");
        while (i < p->size && is_digit(s[i]))
            i++;
    }
    if (i < p->size && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->size && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= p->size || !is_digit(s[i]))
            return error_at(p, i, "an exponent needs digits");
        while (i < p->size && is_digit(s[i]))
            i++;
    }
    size_t len = i - start;
    if (len > JSON_MAX_NUMBER)
        return error_at(p, start, "number longer than %u characters", JSON_MAX_NUMBER);
    int rc = reserve_text(p, len + 1);
    if (rc)
        return rc;
    json_doc *d = p->doc;
    memcpy(d->text + d->text_used, s + start, len);
    d->text[d->text_used + len] = '\0';
    d->nodes[node].value = d->text_used;
    d->text_used += len + 1;
    p->pos = i;
    return 0;
}

static int read_literal(json_parser *p, json_type *type)
{
    static const struct {
        const char *word;
        json_type type;
    } words[] = { { "true", JSON_TRUE }, { "false", JSON_FALSE }, { "null", JSON_NULL } };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        size_t n = strlen(words[i].word);
        if (p->size - p->pos >= n && memcmp(p->s + p->pos, words[i].word, n) == 0) {
            size_t after = p->pos + n;
            unsigned char c = after < p->size ? p->s[after] : ' ';
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c))
                break;
            *type = words[i].type;
            p->pos = after;
            return 0;
        }
    }
    return unexpected(p, "a value");
}

/* ------------------------------------------------------------------ */
/* Structure. */

/* A member's key and its colon; leaves the key pending for the value. */
static int read_key(json_parser *p)
{
    skip_blanks(p);
    if (p->pos >= p->size || p->s[p->pos] != '"')
        return unexpected(p, "a string key");
    uint64_t line = p->line;
    uint32_t col = column_at(p, p->pos);
    size_t off = 0;
    int rc = read_string(p, &off);
    if (rc)
        return rc;
    skip_blanks(p);
    if (p->pos >= p->size || p->s[p->pos] != ':')
        return unexpected(p, "':' after the key");
    p->pos++;
    p->key = off;
    p->key_line = line;
    p->key_col = col;
    return 0;
}

static int push_container(json_parser *p, size_t node)
{
    if (p->depth == JSON_MAX_DEPTH)
        return error_at(p, p->pos, "nesting deeper than %u levels", JSON_MAX_DEPTH);
    p->stack[p->depth++] = (open_container){ node, JSON_NONE };
    p->pos++;
    return 0;
}

/* One value at p->pos. *opened is set when it opened a non-empty container
 * (whose first element or key is next). */
static int read_value(json_parser *p, int *opened)
{
    *opened = 0;
    skip_blanks(p);
    if (p->pos >= p->size)
        return unexpected(p, "a value");
    unsigned char c = p->s[p->pos];
    size_t node = 0;
    int rc;
    if (c == '{' || c == '[') {
        int object = c == '{';
        rc = add_node(p, object ? JSON_OBJECT : JSON_ARRAY, &node);
        if (!rc)
            rc = push_container(p, node);
        if (rc)
            return rc;
        skip_blanks(p);
        if (p->pos < p->size && p->s[p->pos] == (object ? '}' : ']')) {
            p->pos++;
            p->depth--;
            return 0;
        }
        *opened = 1;
        return object ? read_key(p) : 0;
    }
    if (c == '"') {
        size_t off = 0;
        rc = add_node(p, JSON_STRING, &node);
        if (!rc)
            rc = read_string(p, &off);
        if (!rc)
            p->doc->nodes[node].value = off;
        return rc;
    }
    if (c == '-' || is_digit(c)) {
        rc = add_node(p, JSON_NUMBER, &node);
        return rc ? rc : read_number(p, node);
    }
    json_type type = JSON_NULL;
    size_t at = p->pos;
    rc = read_literal(p, &type);
    if (rc)
        return rc;
    size_t after = p->pos;
    p->pos = at; /* the node starts at the literal */
    rc = add_node(p, type, &node);
    p->pos = after;
    return rc;
}

/* After a value inside a container: a separator, or the container's end
 * (then the container itself is the value just finished). Sets *more when
 * another value follows. */
static int after_value(json_parser *p, int *more)
{
    *more = 0;
    while (p->depth) {
        open_container *c = &p->stack[p->depth - 1];
        int object = p->doc->nodes[c->node].type == JSON_OBJECT;
        skip_blanks(p);
        if (p->pos < p->size && p->s[p->pos] == ',') {
            p->pos++;
            *more = 1;
            return object ? read_key(p) : 0;
        }
        if (p->pos < p->size && p->s[p->pos] == (object ? '}' : ']')) {
            p->pos++;
            p->depth--;
            continue;
        }
        return unexpected(p, object ? "',' or '}'" : "',' or ']'");
    }
    return 0;
}

static int parse_document(json_parser *p)
{
    if (p->size >= 3 && memcmp(p->s, "\xEF\xBB\xBF", 3) == 0)
        p->pos = p->line_start = 3;
    for (;;) {
        int opened = 0, more = 0;
        int rc = read_value(p, &opened);
        if (rc)
            return rc;
        if (opened)
            continue;
        rc = after_value(p, &more);
        if (rc)
            return rc;
        if (!more)
            break;
    }
    skip_blanks(p);
    if (p->pos < p->size)
        return p->s[p->pos] == '\0' ? error_at(p, p->pos, "NUL byte after the JSON value")
                                    : error_at(p, p->pos, "unexpected text after the JSON value");
    return 0;
}

int json_parse(const char *name, const void *data, size_t size, const tessel_allocator *a,
               json_doc *doc, tessel_diag *diag)
{
    memset(doc, 0, sizeof(*doc));
    doc->alloc = a;
    if (!name)
        name = "";
    if (size > JSON_MAX_BYTES)
        return tessel_diag_set(diag, TESSEL_EPARSE, name, 1, 1, NULL,
                               "%zu bytes exceed the JSON reader's limit of %zu", size,
                               JSON_MAX_BYTES);
    json_parser p = { .doc = doc, .name = name, .s = data, .size = size, .line = 1,
                      .diag = diag, .key = JSON_NONE };
    int rc = parse_document(&p);
    if (rc)
        json_free(doc);
    return rc;
}

void json_free(json_doc *doc)
{
    tessel_dealloc(doc->alloc, doc->nodes);
    tessel_dealloc(doc->alloc, doc->text);
    const tessel_allocator *a = doc->alloc;
    memset(doc, 0, sizeof(*doc));
    doc->alloc = a;
}

const json_node *json_root(const json_doc *doc)
{
    return doc->nnodes ? &doc->nodes[0] : NULL;
}

const json_node *json_at(const json_doc *doc, size_t i)
{
    return i < doc->nnodes ? &doc->nodes[i] : NULL;
}

const char *json_key(const json_doc *doc, const json_node *n)
{
    return n->key == JSON_NONE ? "" : doc->text + n->key;
}

const char *json_text(const json_doc *doc, const json_node *n)
{
    return n->value == JSON_NONE ? "" : doc->text + n->value;
}

const char *json_type_name(json_type t)
{
    switch (t) {
    case JSON_NULL:
        return "null";
    case JSON_FALSE:
    case JSON_TRUE:
        return "a boolean";
    case JSON_NUMBER:
        return "a number";
    case JSON_STRING:
        return "a string";
    case JSON_ARRAY:
        return "an array";
    case JSON_OBJECT:
        return "an object";
    }
    return "a value";
}
