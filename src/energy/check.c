/* Warnings about how a spec's energy is resolved: Accelergy ERT/ART
 * entries that answer to no component of the spec (with a did-you-mean
 * against the component names), components priced by an ERT whose access
 * width tessel has to assume, and `attributes.width` values that override
 * a different `word_bits`. Warnings are diagnostics with code 0; the
 * library never prints them (the CLI does). */
#include <ctype.h>
#include <string.h>

#include "energy_internal.h"

/* Component names of the spec, as ERT entries are matched against them. */
static size_t component_names(const tessel_spec *spec, const char **names, size_t cap)
{
    size_t n = 0;
    unsigned nl = spec->nlevels < TESSEL_SPEC_MAX_LEVELS ? spec->nlevels : TESSEL_SPEC_MAX_LEVELS;
    for (unsigned l = 0; l < nl && n < cap; l++)
        names[n++] = spec->level[l].name;
    if (n < cap)
        names[n++] = "MAC";
    if (spec->compute.intersect.cls[0] && n < cap)
        names[n++] = "intersect";
    return n;
}

/* 1 when `abbr` is an abbreviation of `word`: same first letter and its
 * letters in order in word, ignoring case ("GLB" of "GlobalBuffer"). */
static int abbreviates(const char *abbr, const char *word)
{
    if (!abbr[0] || !word[0] || tolower((unsigned char)abbr[0]) != tolower((unsigned char)word[0]))
        return 0;
    for (; *abbr; abbr++) {
        while (*word && tolower((unsigned char)*word) != tolower((unsigned char)*abbr))
            word++;
        if (!*word)
            return 0;
        word++;
    }
    return 1;
}

/* The component an unmatched entry most likely meant: the nearest name by
 * edit distance, else the only name that abbreviates the entry's. */
static const char *meant(const char *entry, const char *const *names, size_t n)
{
    const char *near = tessel_nearest_word(entry, names, n);
    if (near)
        return near;
    for (size_t j = 0; j < n; j++)
        if (abbreviates(names[j], entry)) {
            if (near)
                return NULL;
            near = names[j];
        }
    return near;
}

static void warn_unmatched(const en_table *t, const tessel_spec *spec, tessel_diag_list *w)
{
    const char *names[TESSEL_SPEC_MAX_LEVELS + 2];
    size_t n = component_names(spec, names, sizeof(names) / sizeof(names[0]));
    for (size_t i = 0; i < t->nert; i++) {
        const en_ert *e = &t->ert[i];
        int hit = 0;
        for (size_t j = 0; j < n && !hit; j++)
            hit = tessel_energy_ert_matches(e, names[j], 1);
        if (hit)
            continue;
        const char *near = meant(e->name, names, n);
        char list[256];
        int len = 0;
        list[0] = '\0';
        for (size_t j = 0; j < n && len >= 0 && (size_t)len < sizeof(list); j++)
            len += tessel_energy_fmt(list + len, sizeof(list) - (size_t)len, "%s%s",
                                     j ? ", " : "", names[j]);
        if (near)
            tessel_diag_list_add(w, TESSEL_OK, t->path, 0, 0, e->full,
                                 "%s entry '%s' matches no component of the spec, so it prices "
                                 "nothing (did you mean '%s'?); components: %s",
                                 e->has_energy ? "ERT" : "ART", e->full, near, list);
        else
            tessel_diag_list_add(w, TESSEL_OK, t->path, 0, 0, e->full,
                                 "%s entry '%s' matches no component of the spec, so it prices "
                                 "nothing; components: %s",
                                 e->has_energy ? "ERT" : "ART", e->full, list);
    }
}

static int has_width(const tessel_spec_component *c)
{
    const tessel_yaml_node *m = c->attributes;
    return m && m->kind == TESSEL_YAML_MAPPING &&
           (tessel_yaml_get(m, "width") || tessel_yaml_get(m, "datawidth"));
}

static void warn_levels(const tessel_spec *spec, const tessel_design_energy *de,
                        tessel_diag_list *w)
{
    unsigned nl = spec->nlevels < TESSEL_SPEC_MAX_LEVELS ? spec->nlevels : TESSEL_SPEC_MAX_LEVELS;
    for (unsigned l = 0; l < nl; l++) {
        const tessel_spec_level *lv = &spec->level[l];
        const tessel_component_energy *ce = &de->level[l];
        const tessel_spec_pos *p = &lv->energy.pos;
        if (strcmp(ce->method, "ert") == 0 && !has_width(&lv->energy))
            tessel_diag_list_add(w, TESSEL_OK, p->file, p->line, p->column, "attributes.width",
                                 "%s: priced per access by %s (%s), whose access width tessel "
                                 "cannot read; every %u bits moved are charged one access "
                                 "(word_bits). Give attributes.width as the ERT's width",
                                 lv->name, ce->entry, ce->table, ce->width_bits);
        else if (has_width(&lv->energy) && lv->word_bits && ce->width_bits &&
                 ce->width_bits != lv->word_bits)
            tessel_diag_list_add(w, TESSEL_OK, p->file, p->line, p->column, "attributes.width",
                                 "%s: attributes.width %u disagrees with word_bits %u; energy "
                                 "is charged per %u-bit access",
                                 lv->name, ce->width_bits, lv->word_bits, ce->width_bits);
    }
}

int tessel_energy_warnings(const tessel_energy_db *db, const tessel_spec *spec,
                           const tessel_design_energy *design, tessel_diag_list *warnings)
{
    if (!db || !spec || !warnings)
        return TESSEL_EINVAL;
    size_t before = warnings->count;
    for (size_t i = 0; i < db->ntables; i++)
        if (!db->tables[i].is_tessel)
            warn_unmatched(&db->tables[i], spec, warnings);
    if (design)
        warn_levels(spec, design, warnings);
    return (int)(warnings->count - before);
}
