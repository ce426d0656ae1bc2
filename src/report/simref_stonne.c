/* STONNE (stonne-simulator/stonne): the files of one SparseGEMM run.
 *
 * - The stats JSON (the first non-blank byte is '{'): cycles, the global
 *   buffer's (SDMemory's) element reads and writes per operand, and the
 *   multipliers' multiplications.
 * - The .counters file: "CYCLES=N", then "[Section]" lines and component
 *   lines "COMPONENT OPERATION=COUNT ...", the input of STONNE's
 *   calculate_energy.py. Its totals must agree with the JSON when both are
 *   given (the files of one run).
 * - The energy report calculate_energy.py writes (first line "DYNAMIC
 *   ENERGY TABLE USED"): total energy and area, in the units of STONNE's
 *   energy table, which neither the table nor the script states.
 *
 * STONNE counts elements, never bytes, and models no DRAM. */
#include <stdio.h>
#include <string.h>

#include "simref_internal.h"

/* Where a count was read, for messages. */
typedef struct stonne_count {
    int seen;
    uint64_t v;
    uint64_t line;
    uint32_t col;
} stonne_count;

enum { SRAM_WEIGHT_READS, SRAM_INPUT_READS, SRAM_PSUM_READS, SRAM_PSUM_WRITES, SRAM_NCOUNTS };

typedef struct stonne_stats {
    const tessel_simref_input *in;
    stonne_count cycles;
    stonne_count sram[SRAM_NCOUNTS];
    stonne_count multiplications;
    char dataflow[32];
    uint64_t dataflow_line, sdmem_line;
    uint32_t dataflow_col, sdmem_col;
} stonne_stats;

typedef struct stonne_counters {
    const tessel_simref_input *in;
    stonne_count cycles;
    stonne_count gb_reads, gb_writes; /* GLOBALBUFFER READ / WRITE, summed */
    stonne_count multiplications;     /* MULTIPLIER MULTIPLICATION, summed */
} stonne_counters;

typedef struct stonne_energy {
    const tessel_simref_input *in;
    char total_energy[72], total_area[72]; /* the numbers as written */
} stonne_energy;

static void set_count(stonne_count *s, uint64_t v, uint64_t line, uint32_t col)
{
    *s = (stonne_count){ 1, v, line, col };
}

/* ------------------------------------------------------------------ */
/* The stats JSON. */

static int json_count_at(simref_ctx *c, const stonne_stats *st, const json_doc *doc,
                         const json_node *n, const char *field, stonne_count *out)
{
    uint64_t v;
    int rc = simref_json_count(c, st->in->name, doc, n, field, &v);
    if (!rc)
        set_count(out, v, n->line, n->col);
    return rc;
}

static int read_global_stats(simref_ctx *c, stonne_stats *st, const json_doc *doc,
                             const json_node *obj)
{
    static const simref_member members[] = { { "N_cycles", 0 } };
    const json_node *found[1];
    int rc = simref_json_members(c, st->in->name, doc, obj, "GlobalStats", "STONNE field",
                                 members, 1, found, 1);
    if (!rc && !found[0])
        rc = simref_json_missing(c, st->in->name, obj, "GlobalStats", "N_cycles");
    if (!rc)
        rc = json_count_at(c, st, doc, found[0], "GlobalStats.N_cycles", &st->cycles);
    return rc;
}

static int read_mswitch(simref_ctx *c, stonne_stats *st, const json_doc *doc,
                        const json_node *obj)
{
    static const simref_member members[] = {
        { "N_multiplications", 0 },
        { "Total_cycles", -1 },
        { "Idle_cycles", -1 },
        { "N_input_forwardings_send", -1 },
        { "N_input_forwardings_receive", -1 },
        { "N_inputs_receive_from_memory", -1 },
        { "N_weights_receive_from_memory", -1 },
        { "N_weight_fifo_flush", -1 },
        { "N_psums_receive", -1 },
        { "N_psum_forwarding_send", -1 },
        { "N_configurations", -1 },
        { "ActivationFifo", -1 },
        { "WeightFifo", -1 },
        { "PsumFifo", -1 },
        { "ForwardingInputFifo", -1 },
        { "ForwardingOutputFifo", -1 },
    };
    const char *path = "MSNetworkStats.MSwitchStats[]";
    const json_node *found[1];
    int rc = simref_json_members(c, st->in->name, doc, obj, path, "STONNE field", members,
                                 sizeof(members) / sizeof(members[0]), found, 1);
    if (!rc && !found[0])
        rc = simref_json_missing(c, st->in->name, obj, path, "N_multiplications");
    uint64_t v = 0;
    if (!rc)
        rc = simref_json_count(c, st->in->name, doc, found[0], "N_multiplications", &v);
    if (!rc && !simref_add(st->multiplications.v, v, &st->multiplications.v))
        rc = simref_error(c, TESSEL_ERANGE, st->in->name, found[0]->line, found[0]->col,
                          "the multiplications add up past 2^64 - 1");
    return rc;
}

static int read_msnetwork_stats(simref_ctx *c, stonne_stats *st, const json_doc *doc,
                                const json_node *obj)
{
    static const simref_member members[] = { { "MSwitchStats", 0 } };
    const json_node *found[1];
    int rc = simref_json_members(c, st->in->name, doc, obj, "MSNetworkStats", "STONNE field",
                                 members, 1, found, 1);
    if (!rc && !found[0])
        rc = simref_json_missing(c, st->in->name, obj, "MSNetworkStats", "MSwitchStats");
    if (!rc)
        rc = simref_json_expect(c, st->in->name, found[0], JSON_ARRAY,
                                "MSNetworkStats.MSwitchStats");
    if (rc)
        return rc;
    set_count(&st->multiplications, 0, found[0]->line, found[0]->col);
    for (const json_node *m = json_at(doc, found[0]->first); !rc && m; m = json_at(doc, m->next))
        rc = read_mswitch(c, st, doc, m);
    return rc;
}

static int read_sdmemory_stats(simref_ctx *c, stonne_stats *st, const json_doc *doc,
                               const json_node *obj)
{
    static const char *const counts[SRAM_NCOUNTS] = { "N_SRAM_weight_reads", "N_SRAM_input_reads",
                                                      "N_SRAM_psum_reads",
                                                      "N_SRAM_psum_writes" };
    static const simref_member members[] = {
        { "N_SRAM_weight_reads", SRAM_WEIGHT_READS },
        { "N_SRAM_input_reads", SRAM_INPUT_READS },
        { "N_SRAM_psum_reads", SRAM_PSUM_READS },
        { "N_SRAM_psum_writes", SRAM_PSUM_WRITES },
        { "Dataflow", SRAM_NCOUNTS },
        { "Total_cycles", -1 },
        { "STA_sparsity", -1 },
        { "STR_sparsity", -1 },
        { "STA_vectors_at_once_avg", -1 },
        { "STA_vectors_at_once_max", -1 },
        { "N_reconfigurations", -1 },
        { "N_SRAM_read_ports_weights_use", -1 },
        { "N_SRAM_read_ports_inputs_use", -1 },
        { "N_SRAM_read_ports_psums_use", -1 },
        { "N_SRAM_write_ports_use", -1 },
    };
    const char *path = "SDMemoryStats";
    const json_node *found[SRAM_NCOUNTS + 1];
    st->sdmem_line = obj->line;
    st->sdmem_col = obj->col;
    int rc = simref_json_members(c, st->in->name, doc, obj, path, "STONNE field", members,
                                 sizeof(members) / sizeof(members[0]), found, SRAM_NCOUNTS + 1);
    for (int i = 0; !rc && i < SRAM_NCOUNTS; i++) {
        char field[64];
        snprintf(field, sizeof(field), "%s.%s", path, counts[i]);
        if (!found[i])
            rc = simref_json_missing(c, st->in->name, obj, path, counts[i]);
        else
            rc = json_count_at(c, st, doc, found[i], field, &st->sram[i]);
    }
    const json_node *df = found[SRAM_NCOUNTS];
    if (!rc && df) {
        rc = simref_json_expect(c, st->in->name, df, JSON_STRING, "SDMemoryStats.Dataflow");
        if (!rc) {
            snprintf(st->dataflow, sizeof(st->dataflow), "%s", json_text(doc, df));
            st->dataflow_line = df->line;
            st->dataflow_col = df->col;
        }
    }
    return rc;
}

enum { SEC_GLOBAL, SEC_MSNET, SEC_SDMEM, SEC_COUNT };

static int read_stats(simref_ctx *c, stonne_stats *st)
{
    static const simref_member sections[] = {
        { "GlobalStats", SEC_GLOBAL },
        { "MSNetworkStats", SEC_MSNET },
        { "SDMemoryStats", SEC_SDMEM },
        { "hardwareConfiguration", -1 },
        { "LayerConfiguration", -1 },
        { "ASNetworkConfiguration", -1 },
        { "MSNetworkConfiguration", -1 },
        { "DSNetworkStats", -1 },
        { "ASNetworkStats", -1 },
        { "CollectionBusStats", -1 },
    };
    static const char *const required[SEC_COUNT] = { "GlobalStats", "MSNetworkStats",
                                                     "SDMemoryStats" };
    json_doc doc;
    int rc = json_parse(st->in->name, st->in->data, st->in->size, c->alloc, &doc, c->diag);
    if (rc)
        return rc;
    const json_node *root = json_root(&doc);
    const json_node *found[SEC_COUNT];
    rc = simref_json_members(c, st->in->name, &doc, root, "", "STONNE field", sections,
                             sizeof(sections) / sizeof(sections[0]), found, SEC_COUNT);
    for (int i = 0; !rc && i < SEC_COUNT; i++)
        if (!found[i])
            rc = simref_json_missing(c, st->in->name, root, "", required[i]);
    if (!rc)
        rc = read_global_stats(c, st, &doc, found[SEC_GLOBAL]);
    if (!rc)
        rc = read_msnetwork_stats(c, st, &doc, found[SEC_MSNET]);
    if (!rc)
        rc = read_sdmemory_stats(c, st, &doc, found[SEC_SDMEM]);
    json_free(&doc);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The .counters file. */

typedef struct counter_kind {
    const char *component;
    const char *operations[4];
} counter_kind;

/* The components and operations of STONNE's energy table. */
static const counter_kind counter_kinds[] = {
    { "RN_WIRE", { "WRITE", "READ" } },
    { "DN_WIRE", { "WRITE", "READ" } },
    { "MN_WIRE", { "WRITE", "READ" } },
    { "CB_WIRE", { "WRITE", "READ" } },
    { "FIFO", { "PUSH", "POP", "FRONT" } },
    { "ADDER", { "ADD_2_1", "ADD_3_1", "CONFIGURATION" } },
    { "SWITCH", { "ROUTE_UNICAST", "ROUTE_BROADCAST" } },
    { "MULTIPLIER", { "MULTIPLICATION", "FORWARD_PSUM", "CONFIGURATION" } },
    { "GLOBALBUFFER", { "READ", "WRITE" } },
    { "ACCUMULATOR", { "READ", "WRITE", "ADD" } },
};

static const char *const counter_sections[] = { "DSNetwork", "MSNetwork", "ReduceNetwork",
                                                "GlobalBuffer", "CollectionBus" };

static int is_component_char(char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

static uint32_t col_of(const char *line, const char *at)
{
    size_t c = (size_t)(at - line) + 1;
    return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

/* The next blank-separated word of text[*pos..len). */
static int next_word(const char *text, size_t len, size_t *pos, const char **word, size_t *wlen)
{
    size_t i = *pos;
    while (i < len && (text[i] == ' ' || text[i] == '\t'))
        i++;
    if (i >= len)
        return 0;
    size_t start = i;
    while (i < len && text[i] != ' ' && text[i] != '\t')
        i++;
    *word = text + start;
    *wlen = i - start;
    *pos = i;
    return 1;
}

static const counter_kind *find_component(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(counter_kinds) / sizeof(counter_kinds[0]); i++)
        if (strlen(counter_kinds[i].component) == len &&
            memcmp(counter_kinds[i].component, name, len) == 0)
            return &counter_kinds[i];
    return NULL;
}

static int known_operation(const counter_kind *k, const char *op, size_t len)
{
    for (int i = 0; i < 4 && k->operations[i]; i++)
        if (strlen(k->operations[i]) == len && memcmp(k->operations[i], op, len) == 0)
            return 1;
    return 0;
}

/* NAME=COUNT at word[0..wlen): *eq receives the '='. */
static int split_counter(simref_ctx *c, const stonne_counters *sc, uint64_t line,
                         const char *text, const char *word, size_t wlen, size_t *namelen,
                         uint64_t *v)
{
    const char *eq = memchr(word, '=', wlen);
    if (!eq || eq == word)
        return simref_error(c, TESSEL_EPARSE, sc->in->name, line, col_of(text, word),
                            "expected OPERATION=COUNT, found '%.*s'",
                            (int)(wlen < 60 ? wlen : 60), word);
    *namelen = (size_t)(eq - word);
    const char *num = eq + 1;
    size_t numlen = wlen - *namelen - 1;
    int rc = simref_parse_count(num, numlen, v);
    if (rc == SIMREF_COUNT_TOO_LARGE)
        return simref_error(c, TESSEL_ERANGE, sc->in->name, line, col_of(text, num),
                            "counter %.*s is larger than 2^64 - 1",
                            (int)(*namelen < 60 ? *namelen : 60), word);
    if (rc)
        return simref_error(c, TESSEL_EPARSE, sc->in->name, line, col_of(text, num),
                            "counter %.*s: expected a whole number >= 0, found '%.*s'",
                            (int)(*namelen < 60 ? *namelen : 60), word,
                            (int)(numlen < 40 ? numlen : 40), num);
    return 0;
}

static int add_to(simref_ctx *c, const stonne_counters *sc, stonne_count *total, uint64_t v,
                  uint64_t line, uint32_t col)
{
    if (!total->seen)
        set_count(total, 0, line, col);
    if (simref_add(total->v, v, &total->v))
        return 0;
    return simref_error(c, TESSEL_ERANGE, sc->in->name, line, col,
                        "the counts add up past 2^64 - 1");
}

/* "COMPONENT OP=N OP=N ..." */
static int read_counter_line(simref_ctx *c, stonne_counters *sc, uint64_t line,
                             const char *text, size_t len)
{
    size_t pos = 0, clen = 0;
    const char *comp = NULL;
    next_word(text, len, &pos, &comp, &clen);
    for (size_t i = 0; i < clen; i++)
        if (!is_component_char(comp[i]))
            return simref_error(c, TESSEL_EPARSE, sc->in->name, line, col_of(text, comp + i),
                                "expected a component name (capitals, digits, '_') at the "
                                "start of a counter line");
    const counter_kind *kind = find_component(comp, clen);
    char name[SIMREF_NAME_MAX * 4];
    if (!kind) {
        snprintf(name, sizeof(name), "%.*s", (int)(clen < 200 ? clen : 200), comp);
        int rc = simref_note_unknown(c, sc->in->name, line, col_of(text, comp),
                                     "STONNE component", name);
        if (rc)
            return rc;
    }
    const char *word;
    size_t wlen;
    while (next_word(text, len, &pos, &word, &wlen)) {
        size_t oplen = 0;
        uint64_t v = 0;
        int rc = split_counter(c, sc, line, text, word, wlen, &oplen, &v);
        if (rc)
            return rc;
        uint32_t col = col_of(text, word + oplen + 1); /* the count */
        if (kind && !known_operation(kind, word, oplen)) {
            snprintf(name, sizeof(name), "%s %.*s", kind->component,
                     (int)(oplen < 200 ? oplen : 200), word);
            rc = simref_note_unknown(c, sc->in->name, line, col_of(text, word),
                                     "STONNE counter", name);
        } else if (kind && strcmp(kind->component, "GLOBALBUFFER") == 0) {
            rc = add_to(c, sc, word[0] == 'R' ? &sc->gb_reads : &sc->gb_writes, v, line, col);
        } else if (kind && strcmp(kind->component, "MULTIPLIER") == 0 && oplen == 14 &&
                   memcmp(word, "MULTIPLICATION", 14) == 0) {
            rc = add_to(c, sc, &sc->multiplications, v, line, col);
        }
        if (rc)
            return rc;
    }
    return 0;
}

/* "[Name]" at text[lead..len). */
static int read_section_line(simref_ctx *c, stonne_counters *sc, uint64_t line,
                             const char *text, size_t len, size_t lead)
{
    if (len - lead < 2 || text[len - 1] != ']')
        return simref_error(c, TESSEL_EPARSE, sc->in->name, line, col_of(text, text + len),
                            "a section line is '[Name]'");
    const char *name = text + lead + 1;
    size_t nlen = len - lead - 2;
    for (size_t i = 0; i < sizeof(counter_sections) / sizeof(counter_sections[0]); i++)
        if (strlen(counter_sections[i]) == nlen && memcmp(counter_sections[i], name, nlen) == 0)
            return 0;
    char buf[SIMREF_NAME_MAX * 4];
    snprintf(buf, sizeof(buf), "%.*s", (int)(nlen < 200 ? nlen : 200), name);
    return simref_note_unknown(c, sc->in->name, line, col_of(text, name), "STONNE section", buf);
}

/* Blanks at the start of text[0..len), and *len without those at its end. */
static size_t blanks(const char *text, size_t *len)
{
    while (*len && (text[*len - 1] == ' ' || text[*len - 1] == '\t'))
        (*len)--;
    size_t lead = 0;
    while (lead < *len && (text[lead] == ' ' || text[lead] == '\t'))
        lead++;
    return lead;
}

static int read_counters(simref_ctx *c, stonne_counters *sc)
{
    simref_lines lines;
    simref_lines_init(&lines, sc->in);
    const char *text;
    size_t len;
    int more, in_section = 0, first = 1;
    while ((more = simref_next_line(c, &lines, &text, &len)) > 0) {
        size_t lead = blanks(text, &len);
        if (lead == len)
            continue;
        const char *start = text + lead;
        uint32_t col = (uint32_t)(lead < UINT32_MAX - 8 ? lead + 1 : UINT32_MAX - 7);
        int rc = 0;
        if (len - lead > 7 && memcmp(start, "CYCLES=", 7) == 0) {
            uint64_t v = 0;
            if (!first)
                return simref_error(c, TESSEL_EPARSE, sc->in->name, lines.line, col,
                                    "CYCLES= belongs on the first line only");
            rc = simref_parse_count(start + 7, len - lead - 7, &v);
            if (rc)
                return simref_error(c, rc == SIMREF_COUNT_TOO_LARGE ? TESSEL_ERANGE
                                                                    : TESSEL_EPARSE,
                                    sc->in->name, lines.line, col + 7,
                                    "CYCLES: expected a whole number >= 0 below 2^64");
            set_count(&sc->cycles, v, lines.line, col + 7);
        } else if (start[0] == '[') {
            rc = read_section_line(c, sc, lines.line, text, len, lead);
            in_section = 1;
        } else if (!in_section) {
            return simref_error(c, TESSEL_EPARSE, sc->in->name, lines.line, col,
                                "a counter line before the first '[Section]' line");
        } else {
            rc = read_counter_line(c, sc, lines.line, text, len);
        }
        if (rc)
            return rc;
        first = 0;
    }
    if (more < 0)
        return more;
    if (!sc->cycles.seen)
        return simref_missing(c, sc->in, "CYCLES", "(the first line, 'CYCLES=N')");
    if (!sc->gb_reads.seen || !sc->gb_writes.seen)
        return simref_missing(c, sc->in, sc->gb_reads.seen ? "GLOBALBUFFER WRITE"
                                                           : "GLOBALBUFFER READ",
                              "(a line 'GLOBALBUFFER READ=N WRITE=N' under [GlobalBuffer])");
    return 0;
}

/* ------------------------------------------------------------------ */
/* The energy report. */

static int is_dashes(const char *text, size_t len)
{
    if (len < 3)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (text[i] != '-')
            return 0;
    return 1;
}

/* Every word of text[pos..len) must be "KEY=REAL". */
static int check_reals(simref_ctx *c, const stonne_energy *se, uint64_t line, const char *text,
                       size_t len, size_t pos)
{
    const char *word;
    size_t wlen;
    while (next_word(text, len, &pos, &word, &wlen)) {
        const char *eq = memchr(word, '=', wlen);
        double v;
        if (!eq || eq == word || !simref_parse_real(eq + 1, wlen - (size_t)(eq + 1 - word), &v))
            return simref_error(c, TESSEL_EPARSE, se->in->name, line, col_of(text, word),
                                "expected NAME=NUMBER, found '%.*s'", (int)(wlen < 60 ? wlen : 60),
                                word);
    }
    return 0;
}

static int matches(const char *text, size_t len, const char *word)
{
    return len == strlen(word) && memcmp(text, word, len) == 0;
}

/* "Total X: REAL" at text[lead..len). */
static int read_total(simref_ctx *c, stonne_energy *se, uint64_t line, const char *text,
                      size_t len, size_t lead)
{
    const char *start = text + lead;
    const char *colon = memchr(start, ':', len - lead);
    size_t vlen = len - (size_t)(colon - text) - 1;
    const char *value = simref_trim(colon + 1, &vlen);
    double v;
    if (!simref_parse_real(value, vlen, &v) || v < 0)
        return simref_error(c, TESSEL_EPARSE, se->in->name, line, col_of(text, value),
                            "expected a number >= 0 after '%.*s:'",
                            (int)(colon - start < 60 ? colon - start : 60), start);
    size_t nlen = (size_t)(colon - start);
    uint32_t name_col = col_of(text, start);
    text = start;
    char *dest = NULL;
    if (matches(text, nlen, "Total Energy"))
        dest = se->total_energy;
    else if (matches(text, nlen, "Total Area"))
        dest = se->total_area;
    else if (!matches(text, nlen, "Total STATIC Energy") &&
             !matches(text, nlen, "Total DYNAMIC Energy")) {
        char name[SIMREF_NAME_MAX * 4];
        snprintf(name, sizeof(name), "%.*s", (int)(nlen < 200 ? nlen : 200), text);
        return simref_note_unknown(c, se->in->name, line, name_col, "STONNE energy total",
                                   name);
    }
    if (dest) {
        if (dest[0])
            return simref_error(c, TESSEL_EPARSE, se->in->name, line, name_col,
                                "'%.*s' appears twice", (int)nlen, text);
        snprintf(dest, 72, "%.*s", (int)vlen, value);
    }
    return 0;
}

/* The report's parts, in order. */
enum { EN_HEADER, EN_TABLE_RULE, EN_TABLE, EN_BREAKDOWN, EN_BREAKDOWN_RULE, EN_TOTALS };

/* One line, text[lead..len) without its blanks; *part advances through the
 * report's parts. */
static int read_energy_line(simref_ctx *c, stonne_energy *se, int *part, uint64_t line,
                            const char *text, size_t len, size_t lead)
{
    static const char header[] = "DYNAMIC ENERGY TABLE USED";
    static const char breakdown[] = "COMPONENT BREAKDOWN";
    const char *start = text + lead;
    size_t n = len - lead;
    uint32_t col = (uint32_t)(lead < UINT32_MAX ? lead + 1 : UINT32_MAX);
    switch (*part) {
    case EN_HEADER:
        if (!matches(start, n, header))
            return simref_error(c, TESSEL_EPARSE, se->in->name, line, col, "expected '%s'",
                                header);
        *part = EN_TABLE_RULE;
        return 0;
    case EN_TABLE_RULE:
    case EN_BREAKDOWN_RULE:
        if (!is_dashes(start, n))
            return simref_error(c, TESSEL_EPARSE, se->in->name, line, col,
                                "expected a line of dashes");
        (*part)++;
        return 0;
    case EN_TABLE: {
        if (is_dashes(start, n)) {
            *part = EN_BREAKDOWN;
            return 0;
        }
        size_t pos = lead;
        const char *word;
        size_t wlen;
        next_word(text, len, &pos, &word, &wlen); /* the component */
        return check_reals(c, se, line, text, len, pos);
    }
    case EN_BREAKDOWN:
        if (!matches(start, n, breakdown))
            return simref_error(c, TESSEL_EPARSE, se->in->name, line, col, "expected '%s'",
                                breakdown);
        *part = EN_BREAKDOWN_RULE;
        return 0;
    default:
        break;
    }
    const char *colon = memchr(start, ':', n);
    if (!colon)
        return simref_error(c, TESSEL_EPARSE, se->in->name, line, col,
                            "expected 'Component: STATIC=.. AREA=.. DYNAMIC=..' or 'Total ..: "
                            "NUMBER'");
    if (n > 6 && memcmp(start, "Total ", 6) == 0)
        return read_total(c, se, line, text, len, lead);
    return check_reals(c, se, line, text, len, (size_t)(colon - text) + 1);
}

static int read_energy(simref_ctx *c, stonne_energy *se)
{
    simref_lines lines;
    simref_lines_init(&lines, se->in);
    const char *text;
    size_t len;
    int more, part = EN_HEADER;
    while ((more = simref_next_line(c, &lines, &text, &len)) > 0) {
        size_t lead = blanks(text, &len);
        if (lead == len)
            continue;
        int rc = read_energy_line(c, se, &part, lines.line, text, len, lead);
        if (rc)
            return rc;
    }
    if (more < 0)
        return more;
    if (!se->total_energy[0])
        return simref_missing(c, se->in, "Total Energy", "(the last line of the report)");
    if (!se->total_area[0])
        return simref_missing(c, se->in, "Total Area", "(near the end of the report)");
    return 0;
}

/* ------------------------------------------------------------------ */
/* One run from its files. */

enum { KIND_STATS, KIND_COUNTERS, KIND_ENERGY, KIND_COUNT };

static int kind_of(const tessel_simref_input *in)
{
    const char *s = in->data;
    size_t i = 0;
    if (in->size >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < in->size && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    if (i < in->size && s[i] == '{')
        return KIND_STATS;
    static const char energy[] = "DYNAMIC ENERGY TABLE USED";
    if (in->size - i >= strlen(energy) && memcmp(s + i, energy, strlen(energy)) == 0)
        return KIND_ENERGY;
    return KIND_COUNTERS;
}

static const char *const kind_names[KIND_COUNT] = { "stats JSON", ".counters file",
                                                    "energy report" };

/* The counters and the JSON of one run count the same events. */
static int agree(simref_ctx *c, const stonne_counters *sc, const stonne_count *mine,
                 const char *what, uint64_t theirs, const char *their_fields,
                 const char *their_file)
{
    if (mine->v == theirs)
        return 0;
    return simref_error(c, TESSEL_EPARSE, sc->in->name, mine->line, mine->col,
                        "%s = %llu here but %s = %llu in %s: the files are not from one run",
                        what, (unsigned long long)mine->v, their_fields,
                        (unsigned long long)theirs, their_file);
}

static int cross_check(simref_ctx *c, const stonne_stats *st, const stonne_counters *sc)
{
    const char *json = st->in->name;
    uint64_t reads = 0;
    for (int i = SRAM_WEIGHT_READS; i <= SRAM_PSUM_READS; i++)
        if (!simref_add(reads, st->sram[i].v, &reads))
            return simref_error(c, TESSEL_ERANGE, json, st->sram[i].line, st->sram[i].col,
                                "the SRAM reads add up past 2^64 - 1");
    int rc = agree(c, sc, &sc->cycles, "CYCLES", st->cycles.v, "GlobalStats.N_cycles", json);
    if (!rc)
        rc = agree(c, sc, &sc->gb_reads, "GLOBALBUFFER READ", reads,
                   "N_SRAM_weight_reads + N_SRAM_input_reads + N_SRAM_psum_reads", json);
    if (!rc)
        rc = agree(c, sc, &sc->gb_writes, "GLOBALBUFFER WRITE", st->sram[SRAM_PSUM_WRITES].v,
                   "N_SRAM_psum_writes", json);
    if (!rc && sc->multiplications.seen)
        rc = agree(c, sc, &sc->multiplications, "MULTIPLIER MULTIPLICATION (summed)",
                   st->multiplications.v, "N_multiplications (summed)", json);
    return rc;
}

typedef struct stonne_run {
    const tessel_simref_input *file[KIND_COUNT];
    stonne_stats stats;
    stonne_counters counters;
    stonne_energy energy;
} stonne_run;

static int sort_inputs(simref_ctx *c, const tessel_simref_input *in, size_t n, stonne_run *run)
{
    for (size_t i = 0; i < n; i++) {
        int k = kind_of(&in[i]);
        if (run->file[k])
            return simref_error(c, TESSEL_EPARSE, in[i].name, 1, 1,
                                "a second STONNE %s (the first is %s); give the files of one run",
                                kind_names[k], run->file[k]->name);
        run->file[k] = &in[i];
    }
    if (!run->file[KIND_STATS] && !run->file[KIND_COUNTERS])
        return simref_error(c, TESSEL_EPARSE, in[0].name, 1, 1,
                            "STONNE's stats JSON or its .counters file is needed (this is %s "
                            "energy report)",
                            n == 1 ? "an" : "only an");
    return 0;
}

static const char *const summary_columns[] = {
    "design", "data", "cycles", "multiplications", "sram_reads_elements", "sram_writes_elements",
    "energy_stonne_units", "area_stonne_units"
};
static const char *const traffic_columns[] = { "design", "data", "level", "tensor",
                                               "reads_elements", "writes_elements" };
enum { COL_CYCLES = 2, COL_MULTS, COL_SRAM_READS, COL_SRAM_WRITES, COL_ENERGY, COL_AREA };
enum { COL_READS = 4, COL_WRITES };

static int summary_row(simref_ctx *c, simref_builder *b, const stonne_run *run,
                       const char *design)
{
    const stonne_stats *st = run->file[KIND_STATS] ? &run->stats : NULL;
    const stonne_counters *sc = run->file[KIND_COUNTERS] ? &run->counters : NULL;
    size_t row;
    int rc = simref_builder_add_row(c, b, st ? st->cycles.line : sc->cycles.line, &row);
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_DESIGN, design);
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_DATA, "");
    if (!rc)
        rc = simref_builder_set_u64(c, b, row, COL_CYCLES, st ? st->cycles.v : sc->cycles.v);
    const stonne_count *mults = st ? &st->multiplications : &sc->multiplications;
    if (!rc && mults->seen)
        rc = simref_builder_set_u64(c, b, row, COL_MULTS, mults->v);
    uint64_t reads = sc ? sc->gb_reads.v : 0, writes = sc ? sc->gb_writes.v : 0;
    if (st) {
        /* cross_check has made sure this sum fits when the counters are given */
        reads = 0;
        for (int i = SRAM_WEIGHT_READS; i <= SRAM_PSUM_READS; i++)
            if (!simref_add(reads, st->sram[i].v, &reads))
                return simref_error(c, TESSEL_ERANGE, st->in->name, st->sram[i].line,
                                    st->sram[i].col, "the SRAM reads add up past 2^64 - 1");
        writes = st->sram[SRAM_PSUM_WRITES].v;
    }
    if (!rc)
        rc = simref_builder_set_u64(c, b, row, COL_SRAM_READS, reads);
    if (!rc)
        rc = simref_builder_set_u64(c, b, row, COL_SRAM_WRITES, writes);
    if (!rc && run->file[KIND_ENERGY])
        rc = simref_builder_set(c, b, row, COL_ENERGY, run->energy.total_energy);
    if (!rc && run->file[KIND_ENERGY])
        rc = simref_builder_set(c, b, row, COL_AREA, run->energy.total_area);
    return rc;
}

/* Whether A (the MK matrix) is the stationary operand, whose reads STONNE
 * counts as weight reads, or the streaming one (input reads). */
static int a_is_stationary(simref_ctx *c, const stonne_stats *st, int *yes)
{
    if (strcmp(st->dataflow, "MK_STA_KN_STR") == 0 || strcmp(st->dataflow, "MK_STR_KN_STA") == 0) {
        *yes = st->dataflow[3] == 'S' && st->dataflow[5] == 'A';
        return 0;
    }
    if (!st->dataflow_line)
        return simref_error(c, TESSEL_EPARSE, st->in->name, st->sdmem_line, st->sdmem_col,
                            "missing field 'SDMemoryStats.Dataflow' (needed to tell which "
                            "operand is A and which B)");
    return simref_error(c, TESSEL_EPARSE, st->in->name, st->dataflow_line, st->dataflow_col,
                        "dataflow '%s' is not one tessel maps (MK_STA_KN_STR, MK_STR_KN_STA)",
                        st->dataflow);
}

static int traffic_row(simref_ctx *c, simref_builder *b, const char *design, const char *tensor,
                       const stonne_count *reads, const stonne_count *writes)
{
    size_t row;
    int rc = simref_builder_add_row(c, b, reads->line, &row);
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_DESIGN, design);
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_DATA, "");
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_LEVEL, "GlobalBuffer");
    if (!rc)
        rc = simref_builder_set(c, b, row, SIMREF_COL_TENSOR, tensor);
    if (!rc)
        rc = simref_builder_set_u64(c, b, row, COL_READS, reads->v);
    if (!rc && writes)
        rc = simref_builder_set_u64(c, b, row, COL_WRITES, writes->v);
    return rc;
}

static int traffic_rows(simref_ctx *c, simref_builder *b, const stonne_run *run,
                        const char *design)
{
    if (!run->file[KIND_STATS])
        return tessel_diag_set(c->diag, TESSEL_EUNSUPPORTED, run->file[KIND_COUNTERS]->name, 0, 0,
                               NULL, "per-tensor counts need STONNE's stats JSON (the "
                                     ".counters file has totals only)");
    const stonne_stats *st = &run->stats;
    int a_is_weights = 0;
    int rc = a_is_stationary(c, st, &a_is_weights);
    /* Rows in workload order: output first, then A, B. */
    if (!rc)
        rc = traffic_row(c, b, design, "Z", &st->sram[SRAM_PSUM_READS],
                         &st->sram[SRAM_PSUM_WRITES]);
    if (!rc)
        rc = traffic_row(c, b, design, "A",
                         &st->sram[a_is_weights ? SRAM_WEIGHT_READS : SRAM_INPUT_READS], NULL);
    if (!rc)
        rc = traffic_row(c, b, design, "B",
                         &st->sram[a_is_weights ? SRAM_INPUT_READS : SRAM_WEIGHT_READS], NULL);
    return rc;
}

int simref_read_stonne(simref_ctx *c, tessel_simref_grain grain, const tessel_simref_input *in,
                       size_t n, simref_builder *b)
{
    SIMREF_BUILDER_FOR_GRAIN(b, c->alloc, grain, summary_columns, traffic_columns);
    stonne_run run;
    memset(&run, 0, sizeof(run));
    int rc = sort_inputs(c, in, n, &run);
    run.stats.in = run.file[KIND_STATS];
    run.counters.in = run.file[KIND_COUNTERS];
    run.energy.in = run.file[KIND_ENERGY];
    if (!rc && run.stats.in)
        rc = read_stats(c, &run.stats);
    if (!rc && run.counters.in)
        rc = read_counters(c, &run.counters);
    if (!rc && run.energy.in)
        rc = read_energy(c, &run.energy);
    if (!rc && run.stats.in && run.counters.in)
        rc = cross_check(c, &run.stats, &run.counters);
    if (rc)
        return rc;
    b->name = (run.stats.in ? run.stats.in : run.counters.in)->name;
    char design[1024];
    simref_stem(b->name, design, sizeof(design));
    if (grain == TESSEL_SIMREF_SUMMARY)
        return summary_row(c, b, &run, design);
    return traffic_rows(c, b, &run, design);
}
