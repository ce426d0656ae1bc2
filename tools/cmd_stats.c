/* tessel stats: tile-occupancy statistics of tensor files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "tessel/model.h"
#include "tessel/stats.h"
#include "tessel/tensor.h"

#define MAX_QUANTILES 32
#define DEFAULT_QUANTILES "0.5,0.9,0.95,0.99"
#define DEFAULT_SAMPLE 0.01
#define DEFAULT_SAMPLE_TEXT "0.01"
#define STATFILE_EXT ".tstat"

enum {
    OPT_HELP,
    OPT_TILE,
    OPT_BASE,
    OPT_QUANTILES,
    OPT_FORMAT,
    OPT_OUTPUT,
    OPT_VALUE_BITS,
    OPT_COORD_BITS,
    OPT_OFFSET_BITS,
    OPT_RUN_BITS,
    OPT_DROP_ZEROS,
    OPT_COMPLEX,
    OPT_CACHE,
    OPT_REBUILD_CACHE,
    OPT_CACHE_DIR,
    OPT_SAVE,
    OPT_SAMPLE,
    OPT_SEED,
    OPT_LABEL,
    OPT_STREAM,
    OPT_BLOCK_ENTRIES,
    OPT_SHARD,
    OPT_PART,
    OPT_MERGE,
    OPT_SPILL_DIR,
    OPT_COUNT
};

static const cli_option options[OPT_COUNT] = {
    [OPT_HELP] = { "--help", "-h", 0 },
    [OPT_TILE] = { "--tile", "-t", 1 },
    [OPT_BASE] = { "--base", NULL, 1 },
    [OPT_QUANTILES] = { "--quantiles", "-Q", 1 },
    [OPT_FORMAT] = { "--format", "-f", 1 },
    [OPT_OUTPUT] = { "--output", "-o", 1 },
    [OPT_VALUE_BITS] = { "--value-bits", NULL, 1 },
    [OPT_COORD_BITS] = { "--coord-bits", NULL, 1 },
    [OPT_OFFSET_BITS] = { "--offset-bits", NULL, 1 },
    [OPT_RUN_BITS] = { "--run-bits", NULL, 1 },
    [OPT_DROP_ZEROS] = { "--drop-zeros", NULL, 0 },
    [OPT_COMPLEX] = { "--complex", NULL, 1 },
    [OPT_CACHE] = { "--cache", NULL, 0 },
    [OPT_REBUILD_CACHE] = { "--rebuild-cache", NULL, 0 },
    [OPT_CACHE_DIR] = { "--cache-dir", NULL, 1 },
    [OPT_SAVE] = { "--save", NULL, 1 },
    [OPT_SAMPLE] = { "--sample", NULL, 1 },
    [OPT_SEED] = { "--seed", NULL, 1 },
    [OPT_LABEL] = { "--label", NULL, 1 },
    [OPT_STREAM] = { "--stream", NULL, 0 },
    [OPT_BLOCK_ENTRIES] = { "--block-entries", NULL, 1 },
    [OPT_SHARD] = { "--shard", NULL, 1 },
    [OPT_PART] = { "--part", NULL, 1 },
    [OPT_MERGE] = { "--merge", NULL, 0 },
    [OPT_SPILL_DIR] = { "--spill-dir", NULL, 1 },
};

/* Entries per streamed block by default: about 0.5 GB of staging and CSR. */
#define DEFAULT_BLOCK_ENTRIES 16777216ull

static void help(void)
{
    printf(
        "usage: tessel stats FILE... [options]\n\n"
        "Tile-occupancy statistics of each tensor (.mtx, .mtx.gz, .tns, .tns.gz, .tsl)\n"
        "for one coordinate-space tile shape, in one pass over its nonzeros.\n\n"
        "options:\n"
        "  -t, --tile SHAPE      tile shape, e.g. 128x128 or 64x64x16; one number applies\n"
        "                        to every mode (default 128)\n"
        "      --base SHAPE      count on this finer grid first and derive SHAPE from it\n"
        "                        (SHAPE must be a multiple of it in every mode)\n"
        "  -Q, --quantiles LIST  occupancy quantiles, comma separated, each in [0,1]\n"
        "                        (default " DEFAULT_QUANTILES ")\n"
        "  -f, --format FMT      text (default), csv or json\n"
        "  -o, --output FILE     write there (atomically) instead of standard output\n"
        "      --value-bits N    bits per stored value for footprints (default 64)\n"
        "      --coord-bits N    bits per coordinate (default 32)\n"
        "      --offset-bits N   bits per CSR row pointer (default 32)\n"
        "      --run-bits N      bits per RLE run length (default 32)\n"
        "      --drop-zeros      drop explicit zeros (after summing duplicates)\n"
        "      --complex POLICY  magnitude (default: keep |z|) or reject\n"
        "      --cache           use/refresh a binary cache FILE.tsl beside each source\n"
        "      --rebuild-cache   rewrite the cache even if it looks fresh\n"
        "      --cache-dir DIR   keep caches in DIR instead (implies --cache)\n\n"
        "D2T2 statistics files (one matrix):\n"
        "      --save OUT.tstat  collect the D2T2 statistics (PrTileIdx, ProbIndex, Corrs,\n"
        "                        TileCorrs, SizeTile, MaxTile) on the --tile base grid\n"
        "                        (default 128x128), save them with the grid's counts in\n"
        "                        OUT.tstat (atomically) and print them (text or json)\n"
        "      --sample F        fraction of non-empty base tiles sampled for Corrs, in\n"
        "                        (0, 1] (default " DEFAULT_SAMPLE_TEXT ")\n"
        "      --seed N          seed of that sample (default 1)\n"
        "      --label TEXT      source identity to store (default: the input's path,\n"
        "                        size and modification time)\n"
        "\nTensors larger than memory (.mtx, .mtx.gz, .tns, .tns.gz, 2-mode .tsl):\n"
        "      --stream          never hold the whole tensor: count the entries of every\n"
        "                        row (first-mode slice) in one pass, then read blocks of\n"
        "                        whole rows of tiles in one more pass each (--spill-dir:\n"
        "                        matrices only); same output, bit for bit\n"
        "      --block-entries N entries per streamed block (default 16777216)\n"
        "      --spill-dir DIR   read a text file once for many blocks: their entries go\n"
        "                        to an unlinked spill file in DIR (16 B per entry)\n"
        "      --shard K/N       summarise only the K-th of N row ranges (1 <= K <= N,\n"
        "                        rows of tiles split evenly; implies --stream) into the\n"
        "                        --part file\n"
        "      --part OUT.tpart  where --shard writes its statistics part\n"
        "      --merge           the FILEs are the N parts of one tensor (.tpart): print\n"
        "                        its statistics, the same as for the whole tensor\n\n"
        "A FILE ending in .tstat is read back and its statistics printed. A FILE ending\n"
        "in .tsd (tessel run --save-stats) prints its output sample's estimate of the\n"
        "output's nonzeros and that estimate's standard error.\n\n"
        "Quantiles are nearest-rank over non-empty tiles: the smallest v such that at\n"
        "least ceil(q*n) of the n non-empty tiles hold <= v nonzeros. Edge tiles cut by\n"
        "the tensor's border count as tiles. Output columns are documented in docs/outputs.md.\n");
}

typedef struct stats_request {
    unsigned long long tile[TESSEL_MAX_ORDER];
    unsigned ntile;
    unsigned long long base[TESSEL_MAX_ORDER];
    unsigned nbase;
    unsigned nq;
    double q[MAX_QUANTILES];
    char q_text[MAX_QUANTILES][24];
    tessel_format_widths widths;
    tessel_load_options load;
    enum { OUT_TEXT, OUT_CSV, OUT_JSON } format;
    const char *save;  /* --save: statistics file to write */
    double sample;     /* --sample */
    unsigned long long seed;
    const char *label; /* --label */
    int stream;        /* --stream (or --shard) */
    unsigned long long block_entries, shard, shards; /* shards 0: no --shard */
    const char *spill_dir; /* --spill-dir, or NULL */
    const char *part;  /* --part */
    int merge;         /* --merge */
} stats_request;

typedef struct mode_summary {
    tessel_occupancy *occ;
} mode_summary;

typedef struct file_stats {
    const char *path;
    unsigned order;
    uint64_t dims[TESSEL_MAX_ORDER];
    uint64_t tile[TESSEL_MAX_ORDER];
    uint64_t nnz;
    char field[16], symmetry[16];
    tessel_occupancy *occ;
    mode_summary modes[TESSEL_MAX_ORDER];
} file_stats;

static void file_stats_clear(file_stats *fs)
{
    tessel_occupancy_free(&fs->occ);
    for (unsigned m = 0; m < TESSEL_MAX_ORDER; m++)
        tessel_occupancy_free(&fs->modes[m].occ);
}

static int parse_quantiles(const char *text, stats_request *req)
{
    req->nq = 0;
    const char *p = text;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (req->nq == MAX_QUANTILES)
            return cli_usage_error("stats", "at most %d quantiles", MAX_QUANTILES);
        if (len == 0 || len >= sizeof(req->q_text[0]))
            return cli_usage_error("stats", "bad quantile list '%s'", text);
        memcpy(req->q_text[req->nq], p, len);
        req->q_text[req->nq][len] = '\0';
        double q;
        if (cli_parse_double("stats", "a quantile", req->q_text[req->nq], &q))
            return CLI_EXIT_USAGE;
        if (q < 0 || q > 1)
            return cli_usage_error("stats", "quantile %s is outside [0, 1]", req->q_text[req->nq]);
        req->q[req->nq++] = q;
        p += len + (comma ? 1 : 0);
        if (comma && !*p)
            return cli_usage_error("stats", "bad quantile list '%s'", text);
    }
    return CLI_EXIT_OK;
}

static int parse_bits(const cli_args *args, int opt, unsigned *out)
{
    const char *v = cli_value(args, opt);
    if (!v)
        return CLI_EXIT_OK;
    unsigned long long n;
    if (cli_parse_u64("stats", options[opt].name, v, &n))
        return CLI_EXIT_USAGE;
    if (n == 0 || n > 1024)
        return cli_usage_error("stats", "%s must be in 1..1024", options[opt].name);
    *out = (unsigned)n;
    return CLI_EXIT_OK;
}

static int parse_save(const cli_args *args, stats_request *req)
{
    req->save = cli_value(args, OPT_SAVE);
    req->label = cli_value(args, OPT_LABEL);
    req->sample = DEFAULT_SAMPLE;
    req->seed = 1;
    const char *sample = cli_value(args, OPT_SAMPLE), *seed = cli_value(args, OPT_SEED);
    if (!req->save && (sample || seed || req->label))
        return cli_usage_error("stats", "--sample, --seed and --label only go with --save");
    if (!req->save)
        return CLI_EXIT_OK;
    if (sample && cli_parse_double("stats", "--sample", sample, &req->sample))
        return CLI_EXIT_USAGE;
    if (!(req->sample > 0 && req->sample <= 1))
        return cli_usage_error("stats", "--sample must be in (0, 1], not '%s'", sample);
    if (seed && cli_parse_u64("stats", "--seed", seed, &req->seed))
        return CLI_EXIT_USAGE;
    if (req->nbase)
        return cli_usage_error("stats", "--save collects on the --tile grid; drop --base");
    if (req->format == OUT_CSV)
        return cli_usage_error("stats", "--save prints its statistics as text or json, not csv");
    return CLI_EXIT_OK;
}

/* --stream, --block-entries, --shard K/N, --part and --merge, and what they exclude. */
static int parse_stream(const cli_args *args, stats_request *req)
{
    const char *shard = cli_value(args, OPT_SHARD), *block = cli_value(args, OPT_BLOCK_ENTRIES);
    req->part = cli_value(args, OPT_PART);
    req->spill_dir = cli_value(args, OPT_SPILL_DIR);
    req->merge = cli_has(args, OPT_MERGE);
    req->stream = cli_has(args, OPT_STREAM) || shard;
    req->block_entries = DEFAULT_BLOCK_ENTRIES;
    if (block && (cli_parse_u64("stats", "--block-entries", block, &req->block_entries) ||
                  req->block_entries == 0))
        return cli_usage_error("stats", "--block-entries must be a positive integer");
    if (shard) {
        char k[32], n[32];
        const char *slash = strchr(shard, '/');
        size_t klen = slash ? (size_t)(slash - shard) : 0;
        if (!slash || klen == 0 || klen >= sizeof(k) || strlen(slash + 1) >= sizeof(n))
            return cli_usage_error("stats", "--shard takes K/N, e.g. 2/8, not '%s'", shard);
        memcpy(k, shard, klen);
        k[klen] = '\0';
        strcpy(n, slash + 1);
        if (cli_parse_u64("stats", "--shard", k, &req->shard) ||
            cli_parse_u64("stats", "--shard", n, &req->shards))
            return CLI_EXIT_USAGE;
        if (req->shard < 1 || req->shard > req->shards || req->shards > UINT32_MAX)
            return cli_usage_error("stats", "--shard K/N needs 1 <= K <= N < 2^32, not '%s'",
                                   shard);
        if (!req->part)
            return cli_usage_error("stats", "--shard writes a statistics part: add --part OUT");
    } else if (req->part) {
        return cli_usage_error("stats", "--part goes with --shard K/N");
    }
    if ((req->stream || req->merge) &&
        (cli_value(args, OPT_BASE) || cli_value(args, OPT_SAVE) || req->load.cache_policy))
        return cli_usage_error("stats", "--stream, --shard and --merge do not go with --base, "
                                        "--save or the cache options");
    if (req->merge && req->stream)
        return cli_usage_error("stats", "--merge reads parts; drop --stream and --shard");
    if (req->spill_dir && !req->stream)
        return cli_usage_error("stats", "--spill-dir goes with --stream or --shard");
    return CLI_EXIT_OK;
}

static int parse_request(const cli_args *args, stats_request *req)
{
    memset(req, 0, sizeof(*req));
    tessel_format_widths_init(&req->widths);
    tessel_load_options_init(&req->load);
    req->load.pattern_only = 1; /* no statistic reads a value */
    const char *tile = cli_value(args, OPT_TILE);
    if (cli_parse_shape("stats", "--tile", tile ? tile : "128", req->tile, TESSEL_MAX_ORDER,
                        &req->ntile))
        return CLI_EXIT_USAGE;
    const char *base = cli_value(args, OPT_BASE);
    if (base && cli_parse_shape("stats", "--base", base, req->base, TESSEL_MAX_ORDER, &req->nbase))
        return CLI_EXIT_USAGE;
    const char *q = cli_value(args, OPT_QUANTILES);
    if (parse_quantiles(q ? q : DEFAULT_QUANTILES, req))
        return CLI_EXIT_USAGE;
    const char *fmt = cli_value(args, OPT_FORMAT);
    if (!fmt || strcmp(fmt, "text") == 0)
        req->format = OUT_TEXT;
    else if (strcmp(fmt, "csv") == 0)
        req->format = OUT_CSV;
    else if (strcmp(fmt, "json") == 0)
        req->format = OUT_JSON;
    else
        return cli_usage_error("stats", "--format must be text, csv or json, not '%s'", fmt);
    if (parse_bits(args, OPT_VALUE_BITS, &req->widths.value_bits) ||
        parse_bits(args, OPT_COORD_BITS, &req->widths.coord_bits) ||
        parse_bits(args, OPT_OFFSET_BITS, &req->widths.offset_bits) ||
        parse_bits(args, OPT_RUN_BITS, &req->widths.run_bits))
        return CLI_EXIT_USAGE;
    req->load.drop_zeros = cli_has(args, OPT_DROP_ZEROS);
    const char *cx = cli_value(args, OPT_COMPLEX);
    if (cx && strcmp(cx, "reject") == 0)
        req->load.complex_policy = TESSEL_COMPLEX_REJECT;
    else if (cx && strcmp(cx, "magnitude") != 0)
        return cli_usage_error("stats", "--complex must be magnitude or reject, not '%s'", cx);
    req->load.cache_dir = cli_value(args, OPT_CACHE_DIR);
    if (cli_has(args, OPT_CACHE) || req->load.cache_dir)
        req->load.cache_policy = TESSEL_CACHE_USE;
    if (cli_has(args, OPT_REBUILD_CACHE))
        req->load.cache_policy = TESSEL_CACHE_REBUILD;
    if (parse_stream(args, req))
        return CLI_EXIT_USAGE;
    return parse_save(args, req);
}

/* Expands a shape given with one number, or checks it has `order` extents. */
static int shape_for(const char *what, const unsigned long long *given, unsigned n, unsigned order,
                     const char *path, uint64_t *out)
{
    if (n != 1 && n != order)
        return cli_usage_error("stats", "%s has %u extents but %s has %u modes", what, n, path,
                               order);
    for (unsigned m = 0; m < order; m++)
        out[m] = given[n == 1 ? 0 : m];
    return CLI_EXIT_OK;
}

static int build_grid(const tessel_tensor *t, const stats_request *req, const char *path,
                      uint64_t *tile, tessel_tile_grid **grid)
{
    tessel_diag d;
    tessel_diag_clear(&d);
    if (shape_for("--tile", req->tile, req->ntile, t->order, path, tile))
        return CLI_EXIT_USAGE;
    int rc;
    if (req->nbase) {
        uint64_t base[TESSEL_MAX_ORDER];
        if (shape_for("--base", req->base, req->nbase, t->order, path, base))
            return CLI_EXIT_USAGE;
        tessel_tile_grid *fine = NULL;
        rc = tessel_tile_grid_build(t, base, NULL, &fine, &d);
        if (!rc)
            rc = tessel_tile_grid_derive(fine, tile, grid, &d);
        tessel_tile_grid_free(&fine);
    } else {
        rc = tessel_tile_grid_build(t, tile, NULL, grid, &d);
    }
    if (rc) {
        if (!d.file[0])
            tessel_diag_set_file(&d, path);
        return cli_report(&d);
    }
    return CLI_EXIT_OK;
}

/* The occupancy of t's tiles of shape `tile`, counted without keeping the
 * grid (memory: one row of tiles' counter and the distinct occupancies). */
static int occupancy_of(const tessel_tensor *t, const uint64_t *tile, tessel_occupancy **occ,
                        tessel_diag *d)
{
    uint64_t all;
    if (tessel_tile_count(t->order, t->dims, tile, &all))
        return tessel_diag_set(d, TESSEL_ERANGE, NULL, 0, 0, "tile",
                               "the tile grid has more than 2^64 tiles; use larger tiles");
    tessel_occupancy_acc *acc = NULL;
    int rc = tessel_occupancy_acc_create(NULL, &acc, d);
    if (!rc)
        rc = tessel_tile_occupancy_add(t, tile, acc, d);
    if (!rc)
        rc = tessel_occupancy_acc_finish(acc, all, occ, d);
    tessel_occupancy_acc_free(&acc);
    return rc;
}

/* Slice-count distribution of mode m: tiles of extent 1 in m, whole elsewhere. */
static int mode_distribution(const tessel_tensor *t, unsigned m, tessel_occupancy **occ)
{
    uint64_t tile[TESSEL_MAX_ORDER];
    for (unsigned k = 0; k < t->order; k++)
        tile[k] = k == m ? 1 : (t->dims[k] ? t->dims[k] : 1);
    tessel_diag d;
    tessel_diag_clear(&d);
    int rc = occupancy_of(t, tile, occ, &d);
    return rc ? cli_report(&d) : CLI_EXIT_OK;
}

static int compute(const char *path, const stats_request *req, file_stats *fs)
{
    memset(fs, 0, sizeof(*fs));
    fs->path = path;
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_tensor *t = NULL;
    int rc = tessel_tensor_load(path, &req->load, NULL, &t, NULL, &d);
    if (rc)
        return cli_report(&d);
    fs->order = t->order;
    memcpy(fs->dims, t->dims, sizeof(fs->dims));
    fs->nnz = t->nnz;
    snprintf(fs->field, sizeof(fs->field), "%s", t->field);
    snprintf(fs->symmetry, sizeof(fs->symmetry), "%s", t->symmetry);
    tessel_tile_grid *grid = NULL;
    if (req->nbase) {
        rc = build_grid(t, req, path, fs->tile, &grid);
        if (!rc && tessel_occupancy_create(grid, &fs->occ, &d))
            rc = -1;
    } else if (shape_for("--tile", req->tile, req->ntile, t->order, path, fs->tile)) {
        rc = CLI_EXIT_USAGE;
    } else if (occupancy_of(t, fs->tile, &fs->occ, &d)) {
        rc = -1;
    }
    if (rc == -1) {
        tessel_diag_set_file(&d, path);
        rc = cli_report(&d);
    }
    tessel_tile_grid_free(&grid);
    for (unsigned m = 0; m < t->order && !rc; m++)
        rc = mode_distribution(t, m, &fs->modes[m].occ);
    tessel_tensor_free(&t);
    return rc;
}

/* file_stats from a (whole) statistics part: printed as compute()'s. */
static int from_part(tessel_stats_part *p, const char *path, file_stats *fs)
{
    tessel_diag d;
    tessel_diag_clear(&d);
    fs->path = path;
    fs->order = p->order;
    memcpy(fs->dims, p->dims, sizeof(p->dims));
    memcpy(fs->tile, p->tile, sizeof(p->tile));
    fs->nnz = p->nnz;
    snprintf(fs->field, sizeof(fs->field), "%s", p->field);
    snprintf(fs->symmetry, sizeof(fs->symmetry), "%s", p->symmetry);
    tessel_occupancy *modes[TESSEL_MAX_ORDER];
    int rc = tessel_stats_part_summary(p, &fs->occ, modes, &d);
    for (unsigned m = 0; m < p->order && !rc; m++)
        fs->modes[m].occ = modes[m];
    if (rc) {
        tessel_diag_set_file(&d, path);
        return cli_report(&d);
    }
    return CLI_EXIT_OK;
}

static int stream_source(const char *path, const stats_request *req, tessel_stats_part **p)
{
    if (tessel_file_kind_of(path) == TESSEL_FILE_UNKNOWN)
        return cli_usage_error("stats", "--stream and --shard read .mtx, .mtx.gz, .tns, .tns.gz "
                                        "and .tsl files, not %s", path);
    /* One extent for every mode, or one per mode: a .tns file's order is
     * known once streamed (checked below), a matrix's now. */
    uint64_t tile[TESSEL_MAX_ORDER];
    int tns = tessel_file_kind_of(path) == TESSEL_FILE_TNS;
    if (!tns && shape_for("--tile", req->tile, req->ntile, 2, path, tile))
        return CLI_EXIT_USAGE;
    for (unsigned m = 0; tns && m < TESSEL_MAX_ORDER; m++)
        tile[m] = req->tile[req->ntile == 1 || m >= req->ntile ? 0 : m];
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_cache_source src;
    int rc = tessel_cache_source_of(path, &req->load, &src, &d);
    if (!rc)
        rc = tessel_stats_stream(path, &req->load, tile, req->shards ? req->shard : 1,
                                 req->shards ? req->shards : 1, req->block_entries,
                                 req->spill_dir, NULL, p, &d);
    if (rc)
        return cli_report(&d);
    unsigned order = (*p)->order;
    if (req->ntile != 1 && req->ntile != order) {
        tessel_stats_part_free(p);
        return cli_usage_error("stats", "--tile has %u extents but %s has %u modes", req->ntile,
                               path, order);
    }
    snprintf((*p)->source, sizeof((*p)->source), "%s size=%llu mtime_ns=%lld", path,
             (unsigned long long)src.size, (long long)src.mtime_ns);
    return CLI_EXIT_OK;
}

/* --stream: the whole file in row blocks. */
static int compute_streamed(const char *path, const stats_request *req, file_stats *fs)
{
    memset(fs, 0, sizeof(*fs));
    tessel_stats_part *p = NULL;
    int rc = stream_source(path, req, &p);
    if (!rc)
        rc = from_part(p, path, fs);
    tessel_stats_part_free(&p);
    return rc;
}

/* --shard K/N: one row range into the --part file. */
static int write_shard(const char *path, const stats_request *req)
{
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_output_prepare(req->part, NULL, &d))
        return cli_report(&d);
    tessel_stats_part *p = NULL;
    int rc = stream_source(path, req, &p);
    if (!rc && tessel_stats_part_write(req->part, p, &d))
        rc = cli_report(&d);
    tessel_stats_part_free(&p);
    return rc;
}

/* --merge: the parts' statistics, each shard 1..N once, of one source. */
static int compute_merged(const cli_args *args, file_stats *fs, tessel_stats_part **whole)
{
    memset(fs, 0, sizeof(*fs));
    int n = cli_positionals(args), rc = CLI_EXIT_OK;
    tessel_diag d;
    tessel_diag_clear(&d);
    unsigned char *seen = tessel_alloc(NULL, (size_t)n + 1);
    if (!seen)
        return cli_usage_error("stats", "out of memory");
    memset(seen, 0, (size_t)n + 1);
    for (int i = 0; i < n && !rc; i++) {
        const char *path = cli_positional(args, i);
        tessel_stats_part *p = NULL;
        if (tessel_stats_part_read(path, NULL, &p, &d)) {
            rc = cli_report(&d);
            break;
        }
        if (p->shards != (uint64_t)n || seen[p->shard]) {
            rc = cli_usage_error("stats", "%s is shard %llu of %llu: --merge needs every shard "
                                          "of one matrix once (%d parts given)",
                                 path, (unsigned long long)p->shard,
                                 (unsigned long long)p->shards, n);
            tessel_stats_part_free(&p);
            break;
        }
        seen[p->shard] = 1;
        if (!*whole) {
            *whole = p;
        } else if (strcmp(p->source, (*whole)->source) || p->shards != (*whole)->shards) {
            rc = cli_usage_error("stats", "%s is a part of '%s' in %llu shards, not of '%s' in "
                                          "%llu", path, p->source, (unsigned long long)p->shards,
                                 (*whole)->source, (unsigned long long)(*whole)->shards);
        } else if (tessel_stats_part_merge(*whole, p, &d)) {
            tessel_diag_set_file(&d, path);
            rc = cli_report(&d);
        }
        if (p != *whole)
            tessel_stats_part_free(&p);
    }
    tessel_dealloc(NULL, seen);
    if (rc)
        return rc;
    /* The printed path is the source's, as `tessel stats SOURCE` prints it. */
    char *identity = NULL;
    for (char *at = strstr((*whole)->source, " size="); at; at = strstr(at + 1, " size="))
        identity = at;
    if (identity)
        *identity = '\0';
    return from_part(*whole, (*whole)->source, fs);
}

/* ------------------------------------------------------------------ */
/* Output */

static void print_shape(FILE *f, const uint64_t *v, unsigned n, const char *sep)
{
    for (unsigned m = 0; m < n; m++)
        fprintf(f, "%s%llu", m ? sep : "", (unsigned long long)v[m]);
}

static const char *mode_name(unsigned order, unsigned m)
{
    if (order == 2)
        return m == 0 ? "rows" : "cols";
    static const char *const names[TESSEL_MAX_ORDER] = { "mode0", "mode1", "mode2", "mode3",
                                                         "mode4", "mode5", "mode6", "mode7" };
    return names[m];
}

static double footprint_mean_bytes(tessel_format f, const file_stats *fs,
                                   const tessel_format_widths *w)
{
    double fixed, per;
    tessel_format_footprint_bits(f, fs->order, fs->tile, w, &fixed, &per);
    return fs->occ->nonempty ? (fixed + fs->occ->mean * per) / 8 : 0;
}

/* The human-readable statistics of one file: shape, tiles, occupancy quantiles and
 * the footprints per format. */
static void print_text(FILE *f, const file_stats *fs, const stats_request *req)
{
    const tessel_occupancy *o = fs->occ;
    fprintf(f, "%s: ", fs->path);
    print_shape(f, fs->dims, fs->order, " x ");
    double positions = 1;
    for (unsigned m = 0; m < fs->order; m++)
        positions *= (double)fs->dims[m];
    fprintf(f, " %s %s, %llu nonzeros (density %.3e)\n", fs->field, fs->symmetry,
            (unsigned long long)fs->nnz, positions > 0 ? (double)fs->nnz / positions : 0.0);
    fprintf(f, "tiles ");
    print_shape(f, fs->tile, fs->order, " x ");
    fprintf(f, ": %llu tiles, %llu non-empty (%.2f %%)\n", (unsigned long long)o->tiles,
            (unsigned long long)o->nonempty,
            o->tiles ? 100.0 * (double)o->nonempty / (double)o->tiles : 0.0);
    fprintf(f, "occupancy of non-empty tiles: min %llu, mean %.2f, max %llu, stddev %.2f\n",
            (unsigned long long)o->min, o->mean, (unsigned long long)o->max, o->stddev);
    fprintf(f, "quantiles:");
    for (unsigned i = 0; i < req->nq; i++)
        fprintf(f, " q%s=%llu", req->q_text[i],
                (unsigned long long)tessel_occupancy_quantile(o, req->q[i]));
    fprintf(f, "\nhistogram of occupancy:\n");
    uint64_t lo[65], hi[65], count[65], most = 0;
    unsigned bins = tessel_occupancy_histogram(o, lo, hi, count);
    for (unsigned b = 0; b < bins; b++)
        if (count[b] > most)
            most = count[b];
    for (unsigned b = 0; b < bins; b++) {
        int bar = most ? (int)((40 * count[b] + most - 1) / most) : 0;
        fprintf(f, "  [%7llu, %7llu) %10llu %.*s\n", (unsigned long long)lo[b],
                (unsigned long long)hi[b], (unsigned long long)count[b], bar,
                "########################################");
    }
    fprintf(f, "footprint per tile in bytes (value %u, coord %u, offset %u, run %u bits):\n",
            req->widths.value_bits, req->widths.coord_bits, req->widths.offset_bits,
            req->widths.run_bits);
    fprintf(f, "  %-7s %12s", "format", "mean");
    for (unsigned i = 0; i < req->nq; i++)
        fprintf(f, " %11s%s", "q", req->q_text[i]);
    fprintf(f, " %12s\n", "max");
    for (int fmt = 0; fmt < TESSEL_FORMAT_COUNT; fmt++) {
        fprintf(f, "  %-7s %12.1f", tessel_format_name(fmt),
                footprint_mean_bytes(fmt, fs, &req->widths));
        for (unsigned i = 0; i < req->nq; i++) {
            uint64_t n = tessel_occupancy_quantile(o, req->q[i]);
            fprintf(f, " %*llu", 12 + (int)strlen(req->q_text[i]) - 1,
                    (unsigned long long)tessel_format_footprint(fmt, fs->order, fs->tile, n,
                                                                &req->widths));
        }
        fprintf(f, " %12llu\n",
                (unsigned long long)tessel_format_footprint(fmt, fs->order, fs->tile, o->max,
                                                            &req->widths));
    }
    for (unsigned m = 0; m < fs->order; m++) {
        const tessel_occupancy *s = fs->modes[m].occ;
        fprintf(f, "%s: mean %.2f, max %llu nonzeros; %llu empty of %llu;", mode_name(fs->order, m),
                fs->dims[m] ? (double)fs->nnz / (double)fs->dims[m] : 0.0,
                (unsigned long long)s->max, (unsigned long long)(fs->dims[m] - s->nonempty),
                (unsigned long long)fs->dims[m]);
        for (unsigned i = 0; i < req->nq; i++)
            fprintf(f, " q%s=%llu", req->q_text[i],
                    (unsigned long long)tessel_occupancy_quantile(s, req->q[i]));
        fprintf(f, "\n");
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

static void json_quantiles(FILE *f, const tessel_occupancy *o, const stats_request *req)
{
    fprintf(f, "{");
    for (unsigned i = 0; i < req->nq; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", req->q_text[i],
                (unsigned long long)tessel_occupancy_quantile(o, req->q[i]));
    fprintf(f, "}");
}

/* The same statistics as print_text, as one JSON object. */
static void print_json(FILE *f, const file_stats *fs, const stats_request *req, const char *indent)
{
    const tessel_occupancy *o = fs->occ;
    fprintf(f, "%s{\n%s  \"file\": ", indent, indent);
    json_string(f, fs->path);
    fprintf(f, ",\n%s  \"order\": %u,\n%s  \"dims\": [", indent, fs->order, indent);
    print_shape(f, fs->dims, fs->order, ", ");
    fprintf(f, "],\n");
    if (fs->order == 2)
        fprintf(f, "%s  \"rows\": %llu,\n%s  \"cols\": %llu,\n", indent,
                (unsigned long long)fs->dims[0], indent, (unsigned long long)fs->dims[1]);
    fprintf(f, "%s  \"nnz\": %llu,\n%s  \"field\": \"%s\",\n%s  \"symmetry\": \"%s\",\n", indent,
            (unsigned long long)fs->nnz, indent, fs->field, indent, fs->symmetry);
    fprintf(f, "%s  \"tile\": [", indent);
    print_shape(f, fs->tile, fs->order, ", ");
    fprintf(f, "],\n");
    if (fs->order == 2)
        fprintf(f, "%s  \"tile_rows\": %llu,\n%s  \"tile_cols\": %llu,\n", indent,
                (unsigned long long)fs->tile[0], indent, (unsigned long long)fs->tile[1]);
    fprintf(f,
            "%s  \"tiles\": %llu,\n%s  \"nonempty_tiles\": %llu,\n"
            "%s  \"occupancy_min\": %llu,\n%s  \"occupancy_mean\": %.17g,\n"
            "%s  \"occupancy_max\": %llu,\n%s  \"occupancy_stddev\": %.17g,\n"
            "%s  \"quantiles\": ",
            indent, (unsigned long long)o->tiles, indent, (unsigned long long)o->nonempty, indent,
            (unsigned long long)o->min, indent, o->mean, indent, (unsigned long long)o->max,
            indent, o->stddev, indent);
    json_quantiles(f, o, req);
    fprintf(f, ",\n%s  \"histogram\": [", indent);
    uint64_t lo[65], hi[65], count[65];
    unsigned bins = tessel_occupancy_histogram(o, lo, hi, count);
    for (unsigned b = 0; b < bins; b++)
        fprintf(f, "%s{\"lo\": %llu, \"hi\": %llu, \"count\": %llu}", b ? ", " : "",
                (unsigned long long)lo[b], (unsigned long long)hi[b],
                (unsigned long long)count[b]);
    fprintf(f, "],\n%s  \"widths\": {\"value_bits\": %u, \"coord_bits\": %u, \"offset_bits\": "
               "%u, \"run_bits\": %u},\n%s  \"footprint_bytes\": {",
            indent, req->widths.value_bits, req->widths.coord_bits, req->widths.offset_bits,
            req->widths.run_bits, indent);
    for (int fmt = 0; fmt < TESSEL_FORMAT_COUNT; fmt++) {
        fprintf(f, "%s\n%s    \"%s\": {\"mean\": %.17g, \"max\": %llu, \"quantiles\": {",
                fmt ? "," : "", indent, tessel_format_name(fmt),
                footprint_mean_bytes(fmt, fs, &req->widths),
                (unsigned long long)tessel_format_footprint(fmt, fs->order, fs->tile, o->max,
                                                            &req->widths));
        for (unsigned i = 0; i < req->nq; i++)
            fprintf(f, "%s\"%s\": %llu", i ? ", " : "", req->q_text[i],
                    (unsigned long long)tessel_format_footprint(
                        fmt, fs->order, fs->tile, tessel_occupancy_quantile(o, req->q[i]),
                        &req->widths));
        fprintf(f, "}}");
    }
    fprintf(f, "\n%s  },\n%s  \"modes\": [", indent, indent);
    for (unsigned m = 0; m < fs->order; m++) {
        const tessel_occupancy *s = fs->modes[m].occ;
        fprintf(f,
                "%s\n%s    {\"mode\": %u, \"name\": \"%s\", \"nonempty\": %llu, \"empty\": %llu, "
                "\"mean\": %.17g, \"max\": %llu, \"quantiles\": ",
                m ? "," : "", indent, m, mode_name(fs->order, m), (unsigned long long)s->nonempty,
                (unsigned long long)(fs->dims[m] - s->nonempty),
                fs->dims[m] ? (double)fs->nnz / (double)fs->dims[m] : 0.0,
                (unsigned long long)s->max);
        json_quantiles(f, s, req);
        fprintf(f, "}");
    }
    fprintf(f, "\n%s  ]\n%s}", indent, indent);
}

static void print_csv_header(FILE *f, const stats_request *req)
{
    fprintf(f, "file,order,dims,nnz,tile,tiles,nonempty_tiles,occupancy_min,occupancy_mean,"
               "occupancy_max,occupancy_stddev");
    for (unsigned i = 0; i < req->nq; i++)
        fprintf(f, ",q%s", req->q_text[i]);
    for (int fmt = 0; fmt < TESSEL_FORMAT_COUNT; fmt++) {
        fprintf(f, ",%s_bytes_mean", tessel_format_name(fmt));
        for (unsigned i = 0; i < req->nq; i++)
            fprintf(f, ",%s_bytes_q%s", tessel_format_name(fmt), req->q_text[i]);
        fprintf(f, ",%s_bytes_max", tessel_format_name(fmt));
    }
    fprintf(f, ",slice_nonempty,slice_max\n");
}

static void print_csv_row(FILE *f, const file_stats *fs, const stats_request *req)
{
    const tessel_occupancy *o = fs->occ;
    tessel_csv_field(f, fs->path);
    fprintf(f, ",%u,", fs->order);
    print_shape(f, fs->dims, fs->order, "x");
    fprintf(f, ",%llu,", (unsigned long long)fs->nnz);
    print_shape(f, fs->tile, fs->order, "x");
    fprintf(f, ",%llu,%llu,%llu,%.17g,%llu,%.17g", (unsigned long long)o->tiles,
            (unsigned long long)o->nonempty, (unsigned long long)o->min, o->mean,
            (unsigned long long)o->max, o->stddev);
    for (unsigned i = 0; i < req->nq; i++)
        fprintf(f, ",%llu", (unsigned long long)tessel_occupancy_quantile(o, req->q[i]));
    for (int fmt = 0; fmt < TESSEL_FORMAT_COUNT; fmt++) {
        fprintf(f, ",%.17g", footprint_mean_bytes(fmt, fs, &req->widths));
        for (unsigned i = 0; i < req->nq; i++)
            fprintf(f, ",%llu",
                    (unsigned long long)tessel_format_footprint(
                        fmt, fs->order, fs->tile, tessel_occupancy_quantile(o, req->q[i]),
                        &req->widths));
        fprintf(f, ",%llu",
                (unsigned long long)tessel_format_footprint(fmt, fs->order, fs->tile, o->max,
                                                            &req->widths));
    }
    /* Non-empty slices and the largest slice per mode, joined by 'x'. */
    fputc(',', f);
    for (unsigned m = 0; m < fs->order; m++)
        fprintf(f, "%s%llu", m ? "x" : "", (unsigned long long)fs->modes[m].occ->nonempty);
    fputc(',', f);
    for (unsigned m = 0; m < fs->order; m++)
        fprintf(f, "%s%llu", m ? "x" : "", (unsigned long long)fs->modes[m].occ->max);
    fputc('\n', f);
}

/* ------------------------------------------------------------------ */
/* D2T2 statistics files (--save, .tstat inputs) */

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A saved stat-estimator file (.tsd): the output sample's estimate of the
 * output's nonzeros and its standard error (docs/models/stat.md, "The output estimate
 * when the sample covers little"). */
static int print_tsd(const char *path, int json, FILE *f)
{
    tessel_stat_data *s = NULL;
    tessel_diag d;
    tessel_diag_clear(&d);
    if (tessel_stat_data_load(path, NULL, &s, &d))
        return cli_report(&d);
    double nnz = tessel_stat_data_output_nnz(s), se = tessel_stat_data_output_nnz_stderr(s);
    if (json) {
        fprintf(f, "{\"file\": ");
        json_string(f, path);
        fprintf(f, ", \"data\": ");
        json_string(f, tessel_stat_data_label(s));
        if (nnz >= 0)
            fprintf(f, ", \"output_nnz\": %.17g", nnz);
        else
            fprintf(f, ", \"output_nnz\": null");
        if (se >= 0)
            fprintf(f, ", \"output_nnz_stderr\": %.17g}", se);
        else
            fprintf(f, ", \"output_nnz_stderr\": null}");
    } else if (nnz < 0) {
        fprintf(f, "%s: %s, no output sample\n", path, tessel_stat_data_label(s));
    } else if (se < 0) {
        fprintf(f, "%s: %s, output nonzeros %.0f (standard error not estimated)\n", path,
                tessel_stat_data_label(s), nnz);
    } else {
        fprintf(f, "%s: %s, output nonzeros %.0f +- %.4g (%.2f %%)\n", path,
                tessel_stat_data_label(s), nnz, se, nnz > 0 ? 100 * se / nnz : 0.0);
    }
    tessel_stat_data_free(&s);
    return CLI_EXIT_OK;
}

/* Shifts printed in text: 0, 1, 2, 4, 8, ... below n. */
static void print_curve_text(FILE *f, const char *name, const double *v, uint64_t n)
{
    fprintf(f, "  %s:", name);
    for (uint64_t s = 0; s < n; s = s ? 2 * s : 1)
        fprintf(f, " s%llu=%.4f", (unsigned long long)s, v[s]);
    fprintf(f, "\n");
}

static void print_d2t2_text(FILE *f, const char *path, const tessel_d2t2_stats *s,
                            const char *source)
{
    fprintf(f, "%s: %llu x %llu, %llu nonzeros\n", path, (unsigned long long)s->dims[0],
            (unsigned long long)s->dims[1], (unsigned long long)s->nnz);
    fprintf(f, "source: %s\n", source);
    fprintf(f, "base tiles %llu x %llu: %llu x %llu tiles, %llu non-empty\n",
            (unsigned long long)s->base[0], (unsigned long long)s->base[1],
            (unsigned long long)s->extent[0], (unsigned long long)s->extent[1],
            (unsigned long long)s->nonempty_tiles);
    fprintf(f, "MaxTile %llu, SizeTile %.4f, non-empty rows per tile %.4f\n",
            (unsigned long long)s->max_tile, s->size_tile, s->size_tile_rows);
    fprintf(f, "PrTileIdx (eq. 9): rows %.6f, cols %.6f\n", s->pr_tile_idx[0], s->pr_tile_idx[1]);
    fprintf(f, "ProbIndex (eq. 10): rows %.6f, cols %.6f\n", s->prob_index[0], s->prob_index[1]);
    fprintf(f, "Corrs (eq. 11, %llu of %llu tiles sampled, fraction %g, seed %llu):\n",
            (unsigned long long)s->sampled_tiles, (unsigned long long)s->nonempty_tiles,
            s->sample_fraction, (unsigned long long)s->seed);
    print_curve_text(f, "rows", s->corrs[0], s->ncorrs[0]);
    print_curve_text(f, "cols", s->corrs[1], s->ncorrs[1]);
    fprintf(f, "TileCorrs (eq. 12):\n");
    print_curve_text(f, "rows", s->tile_corrs[0], s->ntile_corrs[0]);
    print_curve_text(f, "cols", s->tile_corrs[1], s->ntile_corrs[1]);
}

static void print_curve_json(FILE *f, const double *v, uint64_t n)
{
    fprintf(f, "[");
    for (uint64_t s = 0; s < n; s++)
        fprintf(f, "%s%.17g", s ? ", " : "", v[s]);
    fprintf(f, "]");
}

static void print_d2t2_json(FILE *f, const char *path, const tessel_d2t2_stats *s,
                            const char *source)
{
    fprintf(f, "{\n  \"file\": ");
    json_string(f, path);
    fprintf(f, ",\n  \"source\": ");
    json_string(f, source);
    fprintf(f,
            ",\n  \"dims\": [%llu, %llu],\n  \"nnz\": %llu,\n  \"base\": [%llu, %llu],\n"
            "  \"extent\": [%llu, %llu],\n  \"nonempty_tiles\": %llu,\n  \"max_tile\": %llu,\n"
            "  \"size_tile\": %.17g,\n  \"size_tile_rows\": %.17g,\n"
            "  \"pr_tile_idx\": [%.17g, %.17g],\n  \"prob_index\": [%.17g, %.17g],\n"
            "  \"sample_fraction\": %.17g,\n  \"seed\": %llu,\n  \"sampled_tiles\": %llu,\n"
            "  \"corrs\": [",
            (unsigned long long)s->dims[0], (unsigned long long)s->dims[1],
            (unsigned long long)s->nnz, (unsigned long long)s->base[0],
            (unsigned long long)s->base[1], (unsigned long long)s->extent[0],
            (unsigned long long)s->extent[1], (unsigned long long)s->nonempty_tiles,
            (unsigned long long)s->max_tile, s->size_tile, s->size_tile_rows, s->pr_tile_idx[0],
            s->pr_tile_idx[1], s->prob_index[0], s->prob_index[1], s->sample_fraction,
            (unsigned long long)s->seed, (unsigned long long)s->sampled_tiles);
    print_curve_json(f, s->corrs[0], s->ncorrs[0]);
    fprintf(f, ", ");
    print_curve_json(f, s->corrs[1], s->ncorrs[1]);
    fprintf(f, "],\n  \"tile_corrs\": [");
    print_curve_json(f, s->tile_corrs[0], s->ntile_corrs[0]);
    fprintf(f, ", ");
    print_curve_json(f, s->tile_corrs[1], s->ntile_corrs[1]);
    fprintf(f, "]\n}");
}

static void print_d2t2(FILE *f, const stats_request *req, const char *path,
                       const tessel_d2t2_stats *s, const char *source)
{
    if (req->format == OUT_JSON)
        print_d2t2_json(f, path, s, source);
    else if (req->format == OUT_TEXT)
        print_d2t2_text(f, path, s, source);
}

static int load_statfile(const char *path, const stats_request *req, FILE *out)
{
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_d2t2_stats *s = NULL;
    char source[4097];
    int rc = tessel_statfile_read(path, NULL, &s, NULL, source, sizeof(source), &d);
    if (rc)
        return cli_report(&d);
    print_d2t2(out, req, path, s, source);
    tessel_d2t2_free(&s);
    return CLI_EXIT_OK;
}

/* Collects on the --tile base grid, writes req->save, prints. */
static int save_statfile(const char *path, const stats_request *req, FILE *out)
{
    tessel_diag d;
    tessel_diag_clear(&d);
    tessel_tensor *t = NULL;
    int rc = tessel_output_prepare(req->save, NULL, &d);
    if (!rc)
        rc = tessel_tensor_load(path, &req->load, NULL, &t, NULL, &d);
    if (rc)
        return cli_report(&d);
    uint64_t base[2];
    char source[4097];
    tessel_d2t2_stats *s = NULL;
    tessel_tile_grid *grid = NULL;
    if (t->order != 2) {
        unsigned order = t->order;
        tessel_tensor_free(&t);
        return cli_usage_error("stats", "--save needs a matrix; %s has %u modes", path, order);
    }
    if (shape_for("--tile", req->tile, req->ntile, 2, path, base)) {
        tessel_tensor_free(&t);
        return CLI_EXIT_USAGE;
    }
    if (req->label) {
        snprintf(source, sizeof(source), "%s", req->label);
    } else {
        tessel_cache_source src;
        rc = tessel_cache_source_of(path, &req->load, &src, &d);
        if (!rc)
            snprintf(source, sizeof(source), "%s size=%llu mtime_ns=%lld", path,
                     (unsigned long long)src.size, (long long)src.mtime_ns);
    }
    if (!rc)
        rc = tessel_d2t2_collect(t, base, req->sample, req->seed, NULL, &s, &d);
    if (!rc)
        rc = tessel_tile_grid_build(t, s->base, NULL, &grid, &d);
    if (!rc)
        rc = tessel_statfile_write(req->save, s, grid, source, &d);
    tessel_tensor_free(&t);
    tessel_tile_grid_free(&grid);
    if (rc) {
        tessel_d2t2_free(&s);
        if (!d.file[0])
            tessel_diag_set_file(&d, path);
        return cli_report(&d);
    }
    print_d2t2(out, req, path, s, source);
    tessel_d2t2_free(&s);
    return CLI_EXIT_OK;
}

static void print_one(FILE *f, const file_stats *fs, const stats_request *req)
{
    if (req->format == OUT_CSV)
        print_csv_header(f, req);
    if (req->format == OUT_TEXT)
        print_text(f, fs, req);
    else if (req->format == OUT_CSV)
        print_csv_row(f, fs, req);
    else
        print_json(f, fs, req, "");
    if (req->format == OUT_JSON)
        fprintf(f, "\n");
}

/* --merge: the parts merged, printed as `tessel stats SOURCE` prints it. */
static int print_merged(const cli_args *args, const stats_request *req)
{
    file_stats fs;
    tessel_stats_part *whole = NULL;
    int rc = compute_merged(args, &fs, &whole);
    cli_output out;
    if (!rc && cli_output_open(&out, cli_value(args, OPT_OUTPUT)))
        rc = CLI_EXIT_USAGE;
    else if (!rc) {
        print_one(out.stream, &fs, req);
        rc = cli_output_close(&out, 1);
    }
    file_stats_clear(&fs);
    tessel_stats_part_free(&whole);
    return rc;
}

/* tessel stats: parse options, summarise each file, print text/JSON or save .tstat. */
int cmd_stats(int argc, char **argv)
{
    cli_args args;
    if (cli_parse("stats", argc, argv, options, OPT_COUNT, &args))
        return CLI_EXIT_USAGE;
    if (cli_has(&args, OPT_HELP)) {
        help();
        return CLI_EXIT_OK;
    }
    int nfiles = cli_positionals(&args);
    if (nfiles == 0)
        return cli_usage_error("stats", "no input file (see tessel stats --help)");
    stats_request req;
    if (parse_request(&args, &req))
        return CLI_EXIT_USAGE;
    if (req.shards) {
        if (nfiles != 1)
            return cli_usage_error("stats", "--shard takes exactly one matrix file");
        return write_shard(cli_positional(&args, 0), &req);
    }
    if (req.merge)
        return print_merged(&args, &req);
    int nsaved = 0, ntsd = 0;
    for (int i = 0; i < nfiles; i++) {
        nsaved += has_suffix(cli_positional(&args, i), STATFILE_EXT);
        ntsd += has_suffix(cli_positional(&args, i), ".tsd");
    }
    if (ntsd && (ntsd != nfiles || nfiles != 1 || req.save || req.format == OUT_CSV))
        return cli_usage_error("stats", "a .tsd input goes alone, as text or json");
    if (ntsd) {
        cli_output out;
        if (cli_output_open(&out, cli_value(&args, OPT_OUTPUT)))
            return CLI_EXIT_USAGE;
        int rc = print_tsd(cli_positional(&args, 0), req.format == OUT_JSON, out.stream);
        if (!rc && req.format == OUT_JSON)
            fprintf(out.stream, "\n");
        int close_status = cli_output_close(&out, rc == CLI_EXIT_OK);
        return rc ? rc : close_status;
    }
    if (req.save && (nfiles != 1 || nsaved))
        return cli_usage_error("stats", "--save takes exactly one matrix file (not a .tstat)");
    if (nsaved && (nsaved != nfiles || req.format == OUT_CSV))
        return cli_usage_error("stats", ".tstat inputs print as text or json and cannot be "
                                        "mixed with tensor files");
    cli_output out;
    if (cli_output_open(&out, cli_value(&args, OPT_OUTPUT)))
        return CLI_EXIT_USAGE;
    int rc = CLI_EXIT_OK;
    if (req.save || nsaved) {
        int json = req.format == OUT_JSON, list = json && nfiles > 1;
        if (list)
            fprintf(out.stream, "[");
        for (int i = 0; i < nfiles && !rc; i++) {
            if (i)
                fprintf(out.stream, json ? ",\n" : "\n");
            else if (list)
                fprintf(out.stream, "\n");
            rc = req.save ? save_statfile(cli_positional(&args, i), &req, out.stream)
                          : load_statfile(cli_positional(&args, i), &req, out.stream);
        }
        if (json && !rc)
            fprintf(out.stream, list ? "\n]\n" : "\n");
        int close_status = cli_output_close(&out, rc == CLI_EXIT_OK);
        return rc ? rc : close_status;
    }
    if (req.format == OUT_CSV)
        print_csv_header(out.stream, &req);
    if (req.format == OUT_JSON && nfiles > 1)
        fprintf(out.stream, "[\n");
    for (int i = 0; i < nfiles && !rc; i++) {
        file_stats fs;
        rc = req.stream ? compute_streamed(cli_positional(&args, i), &req, &fs)
                        : compute(cli_positional(&args, i), &req, &fs);
        if (!rc) {
            if (req.format == OUT_TEXT)
                print_text(out.stream, &fs, &req);
            else if (req.format == OUT_CSV)
                print_csv_row(out.stream, &fs, &req);
            else
                print_json(out.stream, &fs, &req, nfiles > 1 ? "  " : "");
            if (req.format == OUT_JSON)
                fprintf(out.stream, "%s\n", nfiles > 1 && i + 1 < nfiles ? "," : "");
            else if (req.format == OUT_TEXT && i + 1 < nfiles)
                fprintf(out.stream, "\n");
        }
        file_stats_clear(&fs);
    }
    if (!rc && req.format == OUT_JSON && nfiles > 1)
        fprintf(out.stream, "]\n");
    int close_rc = cli_output_close(&out, rc == CLI_EXIT_OK);
    return rc ? rc : close_rc;
}
