/* Uncompressed outputs under the stat estimator (docs/models/stat.md,
 * "Uncompressed outputs"). An output whose per-rank list reads no prefix
 * count and whose leaf is UB ([UB, UB], [UOP, UB]) stores every position of
 * a tile: each tile of a boundary has the same data and metadata bytes, set
 * by the tile's shape, whatever its nonzeros. Rule 2 moves a whole tile per
 * write-back and per read-back, so the bytes are those counts times the
 * tile's bytes: exact wherever the counts are (they come from the input
 * tiles' occupancy, not from the output's nonzeros). A tile larger than its
 * partition also spills inside its visits: that part is the closed forms'
 * estimate (stat_affine_fit keeps the tile's fixed values in m0).
 *
 * At the innermost level an all-UB output is also read by the compute
 * before every update but those at the first reduction coordinate
 * (docs/semantics.md rule 2, "Dense outputs: read-modify-write"). Those
 * multiplies pair the nonzeros of each input at reduction index 0, which
 * the line counts hold: for SpMSpM, A's column 0 times B's row 0. */
#include <string.h>

#include "stat_dense.h"

/* The refusal of an uncompressed innermost output whose first-step
 * multiplies the line counts do not give. */
static int refuse_first_step(const tessel_spec_level *lv, const char *name, tessel_diag *diag)
{
    return tessel_diag_set(diag, TESSEL_EUNSUPPORTED, lv->pos.file, lv->pos.line,
                           lv->pos.column, "format",
                           "level %s: the stat estimator counts the updates of an "
                           "uncompressed output (%s) that read nothing, the multiplies at "
                           "the first reduction coordinate, from the inputs' nonzeros per "
                           "row and column, which do not give them for this workload's "
                           "reduction: use -e exact",
                           lv->name, name);
}

int stat_dense_list(const unsigned char *ranks, unsigned n)
{
    return n > 0 && ranks[n - 1] == TESSEL_RANK_UB && !model_ranks_need_prefixes(ranks, n);
}

int stat_dense_output(const tessel_spec *s, unsigned l)
{
    const tessel_spec_level *lv = &s->level[l];
    const tessel_spec_tensor_level *tl = &lv->tensor[0];
    int own = tl->format >= 0;
    if ((own ? tl->format : lv->format) != TESSEL_SPEC_FORMAT_RANKS)
        return 0;
    return stat_dense_list(own ? tl->ranks : lv->ranks, own ? tl->nranks : lv->nranks);
}

int stat_dense_check(const tessel_spec *s, unsigned l, tessel_diag *diag)
{
    const tessel_spec_level *lv = &s->level[l];
    if (s->workload.kind != TESSEL_WORKLOAD_MTTKRP || l + 1 != s->nlevels ||
        !model_tensor_uncompressed(s, l, 0))
        return TESSEL_OK;
    return refuse_first_step(lv, s->workload.tensor[0].name, diag);
}

/* The bytes of one output tile at boundary b (any nonzeros). */
static int tile_bytes(engine *e, unsigned b, uint64_t *data, uint64_t *meta)
{
    boundary bd;
    memset(&bd, 0, sizeof(bd));
    bd.b = b;
    tile_cost tc;
    int rc = exact_geometry(e, &bd);
    if (!rc)
        rc = exact_tile_cost_init(e, &bd, &e->out, &tc);
    if (!rc)
        exact_tile_bytes(&tc, 0, NULL, data, meta);
    exact_boundary_free(e, &bd);
    return rc;
}

/* Level b's output row: every write-back and read-back moves a whole tile.
 * Rule 4's spill, priced by the closed forms with the tile's fixed bytes
 * (bumped_bytes), moves out and back in; each event streams the tile's
 * excess over the partition, split into data and metadata as
 * exact_spill_charge splits it. */
static int price_level(engine *e, unsigned b)
{
    uint64_t d = 0, m = 0;
    int rc = tile_bytes(e, b, &d, &m);
    if (rc)
        return rc;
    unsigned t = e->out.spec_tensor;
    uint64_t part = exact_partition_bytes(e, b, t), S = d + m;
    tessel_traffic *tz = &e->res->traffic[b][t];
    double spill_d = 0, spill_m = 0;
    if (part && S > part && tz->bumped_bytes) {
        uint64_t extra = S - part, em = (uint64_t)((double)extra * (double)m / (double)S);
        double events = (double)tz->bumped_bytes / (double)extra;
        spill_m = events * (double)em;
        spill_d = (double)tz->bumped_bytes - spill_m;
    } else {
        tz->bumped_bytes = tz->overflow_bytes = 0;
    }
    if (!(part && S > part))
        tz->overflow_tiles = 0;
    tz->out_data = tz->writebacks * d + model_count(spill_d);
    tz->out_metadata = tz->writebacks * m + model_count(spill_m);
    tz->in_data = tz->updates * d + model_count(spill_d);
    tz->in_metadata = tz->updates * m + model_count(spill_m);
    tz->worst_tile_bytes = tz->writebacks ? S : 0;
    return TESSEL_OK;
}

/* Input i's nonzeros at reduction index 0, from its line counts: per
 * coordinate of its first mode and of its last (a 3-tensor's contracted
 * mode). -1 when neither is the reduction index. */
static double at_first(const engine *e, const stat_input *in, unsigned i)
{
    const operand *o = &e->in[i];
    unsigned last = o->order - 1, k = e->red[0];
    if (o->x[0] == k && in->line_nnz[0] && in->dims[0])
        return (double)in->line_nnz[0][0];
    if (o->x[last] == k && in->line_nnz[1] && in->dims[1])
        return (double)in->line_nnz[1][0];
    if (o->x[0] == k || o->x[last] == k)
        return 0; /* an empty mode */
    return -1;
}

static int first_step(engine *e, const stat_input *const *in, tessel_diag *diag)
{
    unsigned L = e->nlev - 1, t = e->out.spec_tensor;
    const tessel_spec_level *lv = &e->spec->level[L];
    double n = e->nred == 1 ? 1 : -1;
    for (unsigned i = 0; n >= 0 && i < e->nin; i++) {
        double c = in[i] ? at_first(e, in[i], i) : -1;
        n = c < 0 ? -1 : n * c;
    }
    if (n < 0) /* MTTKRP: T(:,0,0) and the r that B's and C's row 0 share */
        return refuse_first_step(lv, e->spec->workload.tensor[t].name, diag);
    e->dense_first_set = 1;
    e->dense_first = model_count(n);
    return TESSEL_OK;
}

int stat_dense_apply(engine *e, const stat_input *const *in, tessel_diag *diag)
{
    for (unsigned b = 1; b < e->nlev; b++)
        if (stat_dense_output(e->spec, b)) {
            int rc = price_level(e, b);
            if (rc)
                return rc;
        }
    if (model_tensor_uncompressed(e->spec, e->nlev - 1, e->out.spec_tensor))
        return first_step(e, in, diag);
    return TESSEL_OK;
}
