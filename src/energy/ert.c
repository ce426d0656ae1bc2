/* Reading Accelergy ERT / ART files (v0.3 and v0.4, full and _summary
 * forms) into an energy table: entry names stripped of instance ranges,
 * action names mapped to tessel's, the plain-access argument variant
 * chosen (energy_tables/README.md, "Accelergy ERT / ART files"). */
#include <string.h>

#include "energy_internal.h"

/* "system.PE[0..167].buf[1..1]" -> stripped "system.PE.buf", last "buf". */
static void strip_name(const char *full, char *stripped, size_t scap, char *last, size_t lcap)
{
    size_t o = 0;
    int depth = 0;
    for (const char *p = full; *p; p++) {
        if (*p == '[') {
            depth++;
            continue;
        }
        if (*p == ']' && depth > 0) {
            depth--;
            continue;
        }
        if (depth == 0 && o + 1 < scap)
            stripped[o++] = *p;
    }
    stripped[o] = '\0';
    const char *dot = strrchr(stripped, '.');
    en_copy_str(last, lcap, dot ? dot + 1 : stripped);
}

static en_ert *ert_entry(en_ctx *c, en_table *t, const char *full, size_t *cap)
{
    for (size_t i = 0; i < t->nert; i++)
        if (strcmp(t->ert[i].full, full) == 0)
            return &t->ert[i];
    if (t->nert == *cap) {
        size_t ncap = *cap ? 2 * *cap : 8;
        en_ert *grown = tessel_realloc_array(c->alloc, t->ert, ncap, sizeof(*grown));
        if (!grown) {
            en_oom(c);
            return NULL;
        }
        t->ert = grown;
        *cap = ncap;
    }
    en_ert *e = &t->ert[t->nert++];
    memset(e, 0, sizeof(*e));
    en_copy_str(e->full, sizeof(e->full), full);
    strip_name(full, e->stripped, sizeof(e->stripped), e->name, sizeof(e->name));
    return e;
}

/* Accelergy action names -> tessel actions; -1 = ignored (gated_*,
 * address_generation, (de)compression_count, mac_reused, ...). v0.3 calls
 * the per-cycle static energy `idle`, v0.4 `leak`; v0.3 MACs name their
 * operation mac_random, v0.4 compute. */
static int map_action(const char *name)
{
    static const struct {
        const char *name;
        int action;
    } map[] = {
        {"read", TESSEL_ACTION_READ},
        {"write", TESSEL_ACTION_WRITE},
        {"update", TESSEL_ACTION_UPDATE},
        {"metadata_read", TESSEL_ACTION_METADATA_READ},
        {"metadata_write", TESSEL_ACTION_METADATA_WRITE},
        {"compute", TESSEL_ACTION_COMPUTE},
        {"mac_random", TESSEL_ACTION_COMPUTE},
        {"leak", TESSEL_ACTION_LEAK},
        {"idle", TESSEL_ACTION_LEAK},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(name, map[i].name) == 0)
            return map[i].action;
    return -1;
}

/* The argument variant Accelergy charges for a plain access: data and
 * address both changing (data_delta = address_delta = 1). */
static int preferred_arguments(const tessel_yaml_node *args)
{
    if (!args || args->kind != TESSEL_YAML_MAPPING)
        return 0;
    uint64_t dd = 0, ad = 0;
    const tessel_yaml_node *d = tessel_yaml_get(args, "data_delta");
    const tessel_yaml_node *a = tessel_yaml_get(args, "address_delta");
    return d && a && tessel_yaml_u64(d, &dd) == 0 && tessel_yaml_u64(a, &ad) == 0 && dd == 1 &&
           ad == 1;
}

/* One Accelergy ERT/ART entry: the component name and its actions' energies (or area). */
static int read_ert_entry(en_ctx *c, const tessel_yaml_node *m, const char *pf, en_table *t,
                          size_t *cap, int summary)
{
    if (m->kind != TESSEL_YAML_MAPPING)
        return en_error(c, TESSEL_EPARSE, m, pf, "expected a mapping");
    char name[EN_FULLNAME_MAX];
    if (en_get_string(c, m, pf, "name", 1, name, sizeof(name)) < 0)
        return TESSEL_EPARSE;
    const tessel_yaml_node *acts = tessel_yaml_get(m, "actions");
    char af[128];
    en_join_field(af, sizeof(af), pf, "actions");
    if (!acts || acts->kind != TESSEL_YAML_SEQUENCE)
        return en_error(c, TESSEL_EPARSE, acts ? acts : m, af, "'actions' must be a sequence");
    double val[TESSEL_ACTION_COUNT] = {0}, gval[TESSEL_GATED_COUNT] = {0};
    int have[TESSEL_ACTION_COUNT] = {0}, pref[TESSEL_ACTION_COUNT] = {0};
    int bad = 0, skipped_given = 0;
    for (size_t i = 0; i < acts->count; i++) {
        const tessel_yaml_node *a = acts->items[i];
        char ef[128];
        tessel_energy_fmt(ef, sizeof(ef), "%s[%zu]", af, i);
        if (a->kind != TESSEL_YAML_MAPPING) {
            bad = en_error(c, TESSEL_EPARSE, a, ef, "expected a mapping");
            continue;
        }
        char an[EN_NAME_MAX];
        if (en_get_string(c, a, ef, "name", 1, an, sizeof(an)) < 0) {
            bad = TESSEL_EPARSE;
            continue;
        }
        double e = 0;
        /* ERT_summary gives average/max/min when the arguments vary: the
         * average is the closest to what a plain access costs. */
        const char *key = summary && !tessel_yaml_get(a, "energy") ? "average_energy" : "energy";
        if (en_get_number(c, a, a, ef, key, NUM_REQUIRED, &e) < 0) {
            bad = TESSEL_EPARSE;
            continue;
        }
        int act = map_action(an);
        static const char *const gated[TESSEL_GATED_COUNT] = { "gated_read",
                                                               "gated_metadata_read",
                                                               "mac_gated", "mac_skipped" };
        for (int g = 0; g < TESSEL_GATED_COUNT; g++)
            if (strcmp(an, gated[g]) == 0) {
                gval[g] = e;
                skipped_given |= g == TESSEL_SKIPPED_COMPUTE;
            }
        if (act < 0)
            continue;
        int p = preferred_arguments(tessel_yaml_get(a, "arguments"));
        if (!have[act] || (p && !pref[act])) {
            val[act] = e;
            have[act] = 1;
            pref[act] = p;
        }
    }
    if (bad)
        return bad;
    en_ert *e = ert_entry(c, t, name, cap);
    if (!e)
        return TESSEL_ENOMEM;
    if (e->has_energy)
        return en_error(c, TESSEL_EPARSE, m, pf, "'%s' is listed twice", name);
    /* Fallbacks (energy_tables/README.md): a missing write costs a read,
     * a missing update a write, missing metadata actions their data
     * counterparts; compute and leak default to 0. */
    if (!have[TESSEL_ACTION_WRITE])
        val[TESSEL_ACTION_WRITE] = val[TESSEL_ACTION_READ];
    if (!have[TESSEL_ACTION_UPDATE])
        val[TESSEL_ACTION_UPDATE] = val[TESSEL_ACTION_WRITE];
    if (!have[TESSEL_ACTION_METADATA_READ])
        val[TESSEL_ACTION_METADATA_READ] = val[TESSEL_ACTION_READ];
    if (!have[TESSEL_ACTION_METADATA_WRITE])
        val[TESSEL_ACTION_METADATA_WRITE] = val[TESSEL_ACTION_WRITE];
    memcpy(e->pj, val, sizeof(val));
    /* Sparseloop prices a skipped compute at mac_skipped, else mac_gated */
    if (!skipped_given)
        gval[TESSEL_SKIPPED_COMPUTE] = gval[TESSEL_GATED_COMPUTE];
    memcpy(e->gated_pj, gval, sizeof(gval));
    e->has_energy = 1;
    return 0;
}

static int read_art_entry(en_ctx *c, const tessel_yaml_node *m, const char *pf, en_table *t,
                          size_t *cap)
{
    if (m->kind != TESSEL_YAML_MAPPING)
        return en_error(c, TESSEL_EPARSE, m, pf, "expected a mapping");
    char name[EN_FULLNAME_MAX];
    double area = 0;
    int bad = en_get_string(c, m, pf, "name", 1, name, sizeof(name)) < 0;
    bad |= en_get_number(c, m, m, pf, "area", NUM_REQUIRED, &area) < 0;
    if (bad)
        return TESSEL_EPARSE;
    en_ert *e = ert_entry(c, t, name, cap);
    if (!e)
        return TESSEL_ENOMEM;
    if (e->has_area)
        return en_error(c, TESSEL_EPARSE, m, pf, "'%s' is listed twice", name);
    e->area = area;
    e->has_area = 1;
    return 0;
}

int en_read_accelergy(en_ctx *c, const tessel_yaml_node *m, const char *key, en_table *t,
                      size_t *cap)
{
    int is_art = key[0] == 'A';
    int summary = strchr(key, '_') != NULL;
    if (m->kind != TESSEL_YAML_MAPPING)
        return en_error(c, TESSEL_EPARSE, m, key, "expected a mapping");
    char vf[64];
    en_join_field(vf, sizeof(vf), key, "version");
    const tessel_yaml_node *v = tessel_yaml_get(m, "version");
    const char *vs = en_scalar_text(v);
    if (!vs)
        return en_error(c, TESSEL_EPARSE, v ? v : m, vf, "missing 'version'");
    if (strcmp(vs, "0.3") != 0 && strcmp(vs, "0.4") != 0)
        return en_error(c, TESSEL_EUNSUPPORTED, v, vf,
                        "%s version %s is not supported (tessel reads 0.3 and 0.4)", key, vs);
    const char *list = summary ? "table_summary" : "tables";
    char lf[64];
    en_join_field(lf, sizeof(lf), key, list);
    const tessel_yaml_node *tables = tessel_yaml_get(m, list);
    if (!tables || tables->kind != TESSEL_YAML_SEQUENCE)
        return en_error(c, TESSEL_EPARSE, tables ? tables : m, lf, "'%s' must be a sequence",
                        list);
    for (size_t i = 0; i < tables->count; i++) {
        char pf[128];
        tessel_energy_fmt(pf, sizeof(pf), "%s[%zu]", lf, i);
        int r = is_art ? read_art_entry(c, tables->items[i], pf, t, cap)
                       : read_ert_entry(c, tables->items[i], pf, t, cap, summary);
        if (r == TESSEL_ENOMEM)
            return r;
    }
    return 0;
}
