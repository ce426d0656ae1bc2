/* The templates' traffic in closed form from tpl_counts, into the same
 * tessel_result fields the estimators fill (model.h): per storage boundary
 * l (level l-1 -> level l) fills / updates / write-backs and the bytes
 * moved, in the level-l widths (value_bits, coord_bits, offset_bits);
 * level 0 reports the level-1 transfers from its side, the innermost level
 * the MACs' operand reads, as src/model/exact.c does.
 *
 * MatRaptor (row-wise Gustavson, drt §5.2.2 and §6.2, gamma §2.2 and §7):
 *   A  read once in CSR:           nnz(A) (value + coord) + rows(A) offset
 *      This includes the nonzeros a_ik whose row k of B is empty, which no
 *      multiply uses: a row-wise design streams A's rows whole, value and
 *      coordinate together, and learns that row k of B is empty only from
 *      the coordinate k it has read (drt §6.2: A "perfect reuse", read
 *      once; the DRT simulator's MatRaptor charges nnz(A) x 12 + rows x 4).
 *   B  a row per nonzero of A:     multiplies (value + coord) + nnz(A) offset
 *      ("streams such fibers from DRAM and uses them once", gamma §7); an
 *      empty row costs its offset alone (the look-up), a row of B that no
 *      a_ik selects is never fetched.
 *   Z  written once, row by row:   coo nnz(Z) (value + 2 coord) (what the DRT
 *      simulator writes), csr nnz(Z) (value + coord) + rows(Z) offset
 * OuterSPACE (outer product, drt §5.2.2 and §6.2, gamma §2.2 and §2.3):
 *   the multiply phase pairs column k of A with row k of B; only the pairs
 *   where both are non-empty hold a multiply, and the offset arrays (read
 *   whole) say which they are, so only their fibers are fetched (issue 20:
 *   rows of B whose column of A is empty are not read):
 *   A  by columns (CSC):  a_effectual (value + coord) + cols(A) offset
 *   B  by rows (CSR):     b_effectual (value + coord) + rows(B) offset
 *      (a_effectual: nonzeros of A whose row of B is non-empty;
 *      b_effectual: nonzeros of B whose column of A is non-empty)
 *   multiply phase: every partial product written to memory; each nonzero
 *      a_ik that meets a non-empty row k of B makes one partial row
 *      a_ik B(k,:) (gamma §2.3: OuterSPACE splits the partial output
 *      matrices into rows): csr multiplies (value + coord) + partial rows
 *      offset (default), coo multiplies (value + 2 coord)
 *   merge phase: the partials read back once, Z written once (as above).
 *
 * Deeper levels (l >= 2, a PE-side buffer below the LLB) — our choice, the
 * papers idealize the on-chip side (drt §5.2.2):
 *   MatRaptor: each A row and each fetched B row passes once into the PEs
 *      (the same transfers as at level 1); the LLB holds the Z row being
 *      built, so the PEs send it every scaled row of B (one partial row per
 *      effectual nonzero of A: multiplies (value + coord) + an offset each)
 *      and never read it back.
 *   OuterSPACE: each nonzero of A whose row of B is non-empty goes to one
 *      PE (value + coord), the B row it needs follows it (multiplies (value
 *      + coord) + an offset per such nonzero); the partial rows leave the
 *      PE and come back for the merge as at level 1. */
#include <string.h>

#include "template_internal.h"

typedef struct widths {
    unsigned v, c, o; /* bits */
} widths;

static widths widths_at(const tessel_spec *spec, unsigned l)
{
    const tessel_spec_level *lv = &spec->level[l];
    return (widths){ lv->value_bits, lv->coord_bits, lv->offset_bits };
}

/* One tensor's transfers across one boundary. */
typedef struct xfer {
    uint64_t fills, updates, writebacks;
    uint64_t in_data, in_meta, out_data, out_meta;
} xfer;

static void put(tessel_result *r, unsigned l, unsigned t, const xfer *x)
{
    tessel_traffic *tr = &r->traffic[l][t];
    tr->fills = x->fills;
    tr->updates = x->updates;
    tr->writebacks = x->writebacks;
    tr->in_data = x->in_data;
    tr->in_metadata = x->in_meta;
    tr->out_data = x->out_data;
    tr->out_metadata = x->out_meta;
    tr->algorithmic = tpl_sat_add(x->fills, x->updates);
}

/* Z as written once: data and metadata bytes. */
static void output_bytes(const tpl_counts *c, tpl_layout layout, widths w, uint64_t *data,
                         uint64_t *meta)
{
    *data = tpl_bytes(c->nnz_z, w.v);
    *meta = layout == TPL_COO ? tpl_bytes(c->nnz_z, 2 * w.c)
                              : tpl_sat_add(tpl_bytes(c->nnz_z, w.c), tpl_bytes(c->rows_a, w.o));
}

/* Rule 3 (docs/semantics.md), as every estimator: A, B and Z each once, untiled,
 * in the backing store's (level 0) format; not the layouts the template
 * moves them in (those are traffic, not the floor mappings compare with). */
static uint64_t compulsory(const tessel_spec *spec, const tpl_roles *rl, const tpl_counts *c)
{
    const unsigned t[3] = { rl->ta, rl->tb, 0 };
    const uint64_t dims[3][2] = { { c->rows_a, c->cols_a },
                                  { c->cols_a, c->cols_b },
                                  { c->rows_a, c->cols_b } };
    const double rows[3] = { (double)c->rows_a_nonempty, (double)c->rows_b_nonempty,
                             (double)c->rows_z_nonempty };
    const double nnz[3] = { (double)c->nnz_a, (double)c->nnz_b, (double)c->nnz_z };
    double total = 0;
    for (unsigned m = 0; m < 3; m++) {
        double b;
        if (tessel_model_untiled_bytes(spec, 0, t[m], 2, dims[m], &rows[m], nnz[m], &b, NULL))
            return UINT64_MAX; /* a per-rank format the matrix cannot take */
        total += b;
    }
    return total < 1.8e19 ? (uint64_t)total : UINT64_MAX;
}

static void begin(const tpl_counts *c, tessel_result *r)
{
    r->macs = c->multiplies;
    /* each product passes the merger once (gamma §2.2: Gustavson merges
     * scaled rows; outer product merges the partial rows) */
    r->intersections = c->multiplies;
    r->output_nnz = c->nnz_z;
    for (unsigned l = 1; l < r->nlevels; l++)
        r->effectual_tiles[l] = c->a_effectual;
}

/* The backing side of each boundary, the MACs' reads at the innermost
 * level, per-level byte totals and dram_bytes (as src/model/exact.c). */
void tpl_finish(const tessel_spec *spec, tessel_result *r)
{
    unsigned L = r->nlevels - 1;
    for (unsigned l = 0; l < L; l++)
        for (unsigned t = 0; t < r->ntensors; t++) {
            tessel_traffic *tr = &r->traffic[l][t], *child = &r->traffic[l + 1][t];
            tr->reads = tpl_sat_add(child->fills, child->updates);
            tr->child_read_data = child->in_data;
            tr->child_read_metadata = child->in_metadata;
            tr->child_write_data = child->out_data;
            tr->child_write_metadata = child->out_metadata;
        }
    uint64_t mac_bytes = tpl_bytes(r->macs, spec->level[L].value_bits);
    for (unsigned t = 0; t < r->ntensors; t++) {
        tessel_traffic *tr = &r->traffic[L][t];
        tr->reads = r->macs;
        tr->child_read_data = mac_bytes;
        if (t == 0)
            tr->child_write_data = mac_bytes;
    }
    r->dram_bytes = 0;
    for (unsigned l = 0; l <= L; l++)
        for (unsigned t = 0; t < r->ntensors; t++) {
            tessel_traffic *tr = &r->traffic[l][t];
            if (l == 0) {
                tr->data_bytes = tpl_sat_add(tr->child_read_data, tr->child_write_data);
                tr->metadata_bytes = tpl_sat_add(tr->child_read_metadata, tr->child_write_metadata);
                r->dram_bytes =
                    tpl_sat_add(r->dram_bytes, tpl_sat_add(tr->data_bytes, tr->metadata_bytes));
            } else {
                tr->data_bytes = tpl_sat_add(tr->in_data, tr->out_data);
                tr->metadata_bytes = tpl_sat_add(tr->in_metadata, tr->out_metadata);
            }
        }
}

void tpl_matraptor(const tessel_spec *spec, const tpl_roles *rl, const tpl_counts *c,
                   const tpl_options *o, tessel_result *r)
{
    begin(c, r);
    for (unsigned l = 1; l < r->nlevels; l++) {
        widths w = widths_at(spec, l);
        /* A read once, a CSR row pointer per row (drt §6.2: A perfect reuse) */
        xfer a = { .fills = c->rows_a_nonempty,
                   .in_data = tpl_bytes(c->nnz_a, w.v),
                   .in_meta = tpl_sat_add(tpl_bytes(c->nnz_a, w.c), tpl_bytes(c->rows_a, w.o)) };
        /* B: the row k for every a_ik (gamma §7: no reuse of B fibers) */
        xfer b = { .fills = c->nnz_a,
                   .in_data = tpl_bytes(c->multiplies, w.v),
                   .in_meta =
                       tpl_sat_add(tpl_bytes(c->multiplies, w.c), tpl_bytes(c->nnz_a, w.o)) };
        xfer z = { 0 };
        if (l == 1) {
            /* each row of Z written once, complete */
            z.writebacks = c->rows_z_nonempty;
            output_bytes(c, o->output, w, &z.out_data, &z.out_meta);
        } else {
            /* the scaled rows of B go up to the level holding the Z row */
            z.writebacks = c->a_effectual;
            z.out_data = tpl_bytes(c->multiplies, w.v);
            z.out_meta = tpl_sat_add(tpl_bytes(c->multiplies, w.c), tpl_bytes(c->a_effectual, w.o));
        }
        put(r, l, rl->ta, &a);
        put(r, l, rl->tb, &b);
        put(r, l, 0, &z);
    }
    r->compulsory_bytes = compulsory(spec, rl, c);
    tpl_finish(spec, r);
}

/* pe_link: per-column (the DRT simulator's Scheduler_9::Run, whose middle
 * logger takes, for each nonzero of column k of A, top_traffic_read +
 * top_traffic_write: the whole column's batch). Per PE of column k: A's
 * column (a_k values + coordinates), B's row k (b_k + an offset) and the
 * column's a_k partial rows (a_k (b_k + an offset)); summed over the a_k PEs
 * that is a_k^2, a_k b_k and a_k^2 b_k, so the link grows with the square of
 * a column's nonzeros. The merge then reads the partial rows once and writes
 * Z (Run's last middle update, pproduct_write_back + final_write_back). */
static void outerspace_column_link(const tpl_counts *c, const tpl_options *o, widths w,
                                   xfer *a, xfer *b, xfer *z)
{
    *a = (xfer){ .fills = c->nnz_a,
                 .in_data = tpl_bytes(c->a_col_sq, w.v),
                 .in_meta = tpl_bytes(c->a_col_sq, w.c) };
    *b = (xfer){ .fills = c->nnz_a,
                 .in_data = tpl_bytes(c->multiplies, w.v),
                 .in_meta = tpl_sat_add(tpl_bytes(c->multiplies, w.c), tpl_bytes(c->nnz_a, w.o)) };
    uint64_t pm = o->partial == TPL_COO ? tpl_bytes(c->a_col_sq_b, 2 * w.c)
                                        : tpl_sat_add(tpl_bytes(c->a_col_sq_b, w.c),
                                                      tpl_bytes(c->a_col_sq, w.o));
    z->writebacks = tpl_sat_add(c->nnz_a, c->rows_z_nonempty);
    z->out_data = tpl_sat_add(tpl_bytes(c->a_col_sq_b, w.v), z->out_data);
    z->out_meta = tpl_sat_add(pm, z->out_meta);
}

/* OuterSPACE's traffic per boundary (the header's rules) and its options. */
void tpl_outerspace(const tessel_spec *spec, const tpl_roles *rl, const tpl_counts *c,
                    const tpl_options *o, tessel_result *r)
{
    begin(c, r);
    for (unsigned l = 1; l < r->nlevels; l++) {
        widths w = widths_at(spec, l);
        xfer a, b;
        if (l == 1) {
            /* A by columns (CSC) and B by rows (CSR), each read once (drt §6.2:
             * the untiled design hands out columns of A and rows of B), but
             * only the pairs (column k of A, row k of B) that hold a
             * multiply: both offset arrays are read whole (they say which
             * pairs are empty), a column of A whose row of B is empty, or a
             * row of B whose column of A is empty, is not fetched (the DRT
             * simulator's OuterProduct charges row k of B per column k of A) */
            a = (xfer){ .fills = c->k_effectual,
                        .in_data = tpl_bytes(c->a_effectual, w.v),
                        .in_meta = tpl_sat_add(tpl_bytes(c->a_effectual, w.c),
                                               tpl_bytes(c->cols_a, w.o)) };
            b = (xfer){ .fills = c->k_effectual,
                        .in_data = tpl_bytes(c->b_effectual, w.v),
                        .in_meta = tpl_sat_add(tpl_bytes(c->b_effectual, w.c),
                                               tpl_bytes(c->cols_a, w.o)) };
        } else {
            /* a nonzero of A goes to a PE only when its row of B is non-empty */
            a = (xfer){ .fills = c->a_effectual,
                        .in_data = tpl_bytes(c->a_effectual, w.v),
                        .in_meta = tpl_bytes(c->a_effectual, w.c) };
            b = (xfer){ .fills = c->a_effectual,
                        .in_data = tpl_bytes(c->multiplies, w.v),
                        .in_meta = tpl_sat_add(tpl_bytes(c->multiplies, w.c),
                                               tpl_bytes(c->a_effectual, w.o)) };
        }
        /* partial rows: written in the multiply phase, read back in the
         * merge phase (gamma §2.3, §6: "writes and reads to partial matrices") */
        uint64_t pd = tpl_bytes(c->multiplies, w.v);
        uint64_t pm = o->partial == TPL_COO ? tpl_bytes(c->multiplies, 2 * w.c)
                                            : tpl_sat_add(tpl_bytes(c->multiplies, w.c),
                                                          tpl_bytes(c->a_effectual, w.o));
        uint64_t zd, zm;
        output_bytes(c, o->output, w, &zd, &zm);
        xfer z = { .updates = c->a_effectual,
                   .writebacks = tpl_sat_add(c->a_effectual, c->rows_z_nonempty),
                   .in_data = pd,
                   .in_meta = pm,
                   .out_data = tpl_sat_add(pd, zd),
                   .out_meta = tpl_sat_add(pm, zm) };
        if (l >= 2 && o->pe_link_column) {
            /* the partial rows' write: the per-column batches instead */
            z.writebacks = 0;
            z.out_data = zd;
            z.out_meta = zm;
            outerspace_column_link(c, o, w, &a, &b, &z);
        }
        put(r, l, rl->ta, &a);
        put(r, l, rl->tb, &b);
        put(r, l, 0, &z);
        if (o->merge_single) { /* the merge's own transfers: its partial rows in, Z out */
            r->tail.in_bytes[l] = (double)pd + (double)pm;
            r->tail.out_bytes[l] = (double)zd + (double)zm;
        }
    }
    if (o->merge_single)
        tpl_outerspace_merge(c, r);
    r->compulsory_bytes = compulsory(spec, rl, c);
    tpl_finish(spec, r);
}
