/* tessel — accelerator templates: accelerators whose own buffer policy
 * decides their traffic (DESIGN.md rule 5) instead of uniform tiles.
 * Module `template`: depends on `model` (and through it `stats`, `spec`,
 * `tensor`, `base`). The spec names one with `template: NAME` and passes
 * its knobs in `template_options` (spec.h's tessel_spec_template).
 *
 *   matraptor   row-wise product (Gustavson) in C2SR: A read once, a row of
 *               B fetched from DRAM for every nonzero of A that selects it,
 *               Z written once as its rows complete (drt §5.2.2, gamma §7)
 *   outerspace  outer product: a multiply phase that writes every partial
 *               product to memory, a merge phase that reads them back and
 *               writes Z (drt §5.2.2, gamma §2.2, §7)
 *   gamma       Gustavson with a FiberCache: B rows through an LRU cache of
 *               whole rows, partial rows merged with radix R and spilled
 *               beyond it; optional affinity row reordering (gamma §3-5);
 *               stat: Che's characteristic-time approximation of LRU
 *
 * Both have an exact path (from the data) and a statistical one (from the
 * stat estimator's statistics, without the data). Implemented in
 * src/template/ (the closed forms and their sources: template_traffic.c).
 *
 * template_options (both optional):
 *   output_format: coo | csr    Z as written to memory; coo (default) is
 *                               value + row + column per nonzero, as the
 *                               DRT simulator writes it; csr a row offset
 *                               per row instead of the row coordinate
 *   partial_format: coo | csr   outerspace only: the partial products;
 *                               csr (default) is one partial row per
 *                               nonzero of A that meets a non-empty row of
 *                               B (value + column per product, an offset
 *                               per partial row), coo value + row + column
 *                               per product
 * Workloads: SpMSpM Z[i,j] = A[i,k] * B[k,j] in any index names and mode
 * orders, and SpMV (x as a one-column B). */
#ifndef TESSEL_TEMPLATE_H
#define TESSEL_TEMPLATE_H

#include "tessel/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tessel_template_kind {
    TESSEL_TEMPLATE_NONE = 0,
    TESSEL_TEMPLATE_EXTENSOR,
    TESSEL_TEMPLATE_GAMMA,
    TESSEL_TEMPLATE_OUTERSPACE,
    TESSEL_TEMPLATE_MATRAPTOR,
    TESSEL_TEMPLATE_SPARSEPIPE,
    TESSEL_TEMPLATE_COUNT
} tessel_template_kind;

/* "none", "extensor", ...; -1 if unknown. */
int tessel_template_from_name(const char *name);
const char *tessel_template_name(tessel_template_kind k);
/* The spec's template (TESSEL_TEMPLATE_NONE also for a spec built in code). */
tessel_template_kind tessel_template_of(const tessel_spec *spec);

/* The design's traffic under its template: exact from `data`, or (stats
 * non-NULL and data NULL) statistical from the stat estimator's statistics.
 * Fills the same tessel_result fields as the estimators, with the same
 * meaning (levels, tensors, bytes, compulsory_bytes, dram_bytes, macs,
 * output_nnz, estimator). TESSEL_EUNSUPPORTED for templates or workloads
 * not modelled (the message says which); TESSEL_EINVAL naming the
 * template_options key for a bad option. */
int tessel_template_run(const tessel_spec *spec, const tessel_workload_data *data,
                        const tessel_stat_data *stats, const tessel_allocator *a,
                        tessel_result *out, tessel_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
