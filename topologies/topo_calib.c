/* topologies/topo_calib.c - a topology's "calibration": numbers measured on
 * the real machine (calibrate/run.sh, then `conveyor calibrate fit`) replace
 * datasheet-based ones.
 *
 * What a params file sets (docs/calibration.md):
 * - NVLink efficiency = the copy-engine rate GPU 0 -> GPU 1 (path
 *   p2p/gpu0-gpu1/uni/ce, beta) / the raw rate of GPU 0's NVLink link(s) it
 *   uses, applied to every NVLink link of the template;
 * - PCIe efficiency = the pinned host-to-device rate of GPU 0 (path
 *   h2d/gpu0/h2d/pinned) / GPU 0's PCIe link rate, applied to every PCIe
 *   link (GPUs and NICs);
 * - the kernel launch cost (launch_s), used as --launch-us's default.
 * Each only when the measurement is in the file; efficiencies are clamped
 * to (0, 1] (a measured rate above the raw rate is an error: wrong file).
 */
#include "topo_internal.h"

#include <math.h>

#include "calibrate/fit.h"

static int gpu0(const tgraph *g)
{
    for (guint k = 0; k < g->nodes->len; k++) {
        const tnode *n = &g_array_index(g->nodes, tnode, k);
        if (n->kind == FAB_GPU && n->gpu_local == 0)
            return (int)k;
    }
    return -1;
}

/* Raw rate (bytes/s) of GPU 0's link of `kind` (the largest), 0 if none. */
static double gpu0_link_Bps(const tgraph *g, fab_link_kind kind)
{
    int k0 = gpu0(g);
    double best = 0;
    for (guint i = 0; i < g->links->len; i++) {
        const tlink *l = &g_array_index(g->links, tlink, i);
        if (l->d.kind == kind && ((int)l->a == k0 || (int)l->b == k0) && l->d.bw_Bps > best)
            best = l->d.bw_Bps;
    }
    return best;
}

/* Set the efficiency of every `kind` link to beta / raw; false if > 1 or
 * below a topology file's least (TOPO_MIN_EFF). */
static bool set_eff(tgraph *g, fab_link_kind kind, double beta, double raw, double *eff)
{
    *eff = beta / raw;
    if (!(*eff >= TOPO_MIN_EFF) || *eff > 1.02)
        return false;
    if (*eff > 1)
        *eff = 1;
    for (guint i = 0; i < g->links->len; i++) {
        tlink *l = &g_array_index(g->links, tlink, i);
        if (l->d.kind == kind)
            l->d.eff = *eff;
    }
    if (kind == LINK_PCIE)
        g->nic_pcie.eff = *eff;
    return true;
}

bool topo_calib_apply(tgraph *g, const topo_src *src, topo_calib_vals *v, char **summary, GError **err)
{
    *v = (topo_calib_vals){0};
    *summary = NULL;
    if (!g->calibration)
        return true;
    char *dir = g_path_get_dirname(g->path);
    char *path = g_path_is_absolute(g->calibration) ? g_strdup(g->calibration)
                                                     : g_build_filename(dir, g->calibration, NULL);
    g_free(dir);
    calib_params p = {0};
    GError *e = NULL;
    bool ok = calib_params_load(path, &p, &e);
    if (!ok) {
        topo_src_error(src, err, TOPO_ERROR_VALUE, "$.calibration", "%s", e->message);
        g_error_free(e);
        g_free(path);
        return false;
    }
    GString *s = g_string_new(NULL);
    g_string_append_printf(s, "%s (%s):", g->calibration, p.device ? p.device : "?");
    const calib_path *nv = calib_params_find(&p, "p2p/gpu0-gpu1/uni/ce");
    const calib_path *h2d = calib_params_find(&p, "h2d/gpu0/h2d/pinned");
    double raw, eff;
    if (nv && (raw = gpu0_link_Bps(g, LINK_NVLINK)) > 0) {
        if (!set_eff(g, LINK_NVLINK, nv->beta_Bps, raw, &eff)) {
            topo_src_error(src, err, TOPO_ERROR_VALUE, "$.calibration",
                           "%s: p2p/gpu0-gpu1/uni/ce = %.1f GB/s %s GPU 0's NVLink rate %.1f GB/s (wrong file?)",
                           path, nv->beta_Bps / 1e9, eff > 1 ? "exceeds" : "is under 1% of", raw / 1e9);
            ok = false;
        } else {
            g_string_append_printf(s, " NVLink eff %.3f (p2p ce %.1f GB/s)", eff, nv->beta_Bps / 1e9);
        }
    }
    if (ok && h2d && (raw = gpu0_link_Bps(g, LINK_PCIE)) > 0) {
        if (!set_eff(g, LINK_PCIE, h2d->beta_Bps, raw, &eff)) {
            topo_src_error(src, err, TOPO_ERROR_VALUE, "$.calibration",
                           "%s: h2d/gpu0/h2d/pinned = %.1f GB/s %s GPU 0's PCIe rate %.1f GB/s (wrong file?)",
                           path, h2d->beta_Bps / 1e9, eff > 1 ? "exceeds" : "is under 1% of", raw / 1e9);
            ok = false;
        } else {
            g_string_append_printf(s, " PCIe eff %.3f (h2d pinned %.1f GB/s)", eff, h2d->beta_Bps / 1e9);
        }
    }
    if (ok && !isnan(p.launch_s) && p.launch_s > 0) {
        v->launch_us = p.launch_s * 1e6;
        g_string_append_printf(s, " launch %.2f us", v->launch_us);
    }
    const calib_gemm *gm = &p.gemm[CALIB_GEMM_BF16];
    if (ok && gm->eff_Fps > 0) {
        v->gemm_Fps = gm->eff_Fps, v->gemm_k0 = gm->k0;
        g_string_append_printf(s, " GEMM bf16 %.1f TFLOP/s k0 %.0f", gm->eff_Fps / 1e12, gm->k0);
    }
    const calib_path *d2d = calib_params_find(&p, "d2d_copy/gpu0/d2d/ce");
    if (ok && d2d) {
        v->hbm_copy_Bps = d2d->beta_Bps;
        g_string_append_printf(s, " HBM copy %.1f GB/s", d2d->beta_Bps / 1e9);
    }
    calib_params_clear(&p);
    g_free(path);
    if (ok)
        *summary = g_string_free(s, FALSE);
    else
        g_string_free(s, TRUE);
    return ok;
}
