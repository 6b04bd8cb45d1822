/* cli/sysbuild.c - shared options and topo -> coll_system. */
#include "sysbuild.h"
#include "cli.h"

#include <math.h>
#include <stdio.h>

bool sys_parse_launch_us(const char *value, double *out)
{
    char *end = NULL;
    double v = value ? g_ascii_strtod(value, &end) : NAN;
    if (!value || end == value || *end || !isfinite(v) || v < 0 || v > 1e6)
        return false;
    *out = v;
    return true;
}

/* --launch-us and --launch-channel-us, parsed strictly (a double option took
 * "nan" and the -1 that means "not given" silently); GLib passes the option's
 * name as given ("--launch-us"). */
static gboolean launch_arg(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    sys_opts *o = data;
    bool ch = g_str_has_suffix(name, "channel-us");
    if (!sys_parse_launch_us(value, ch ? &o->launch_ch_us : &o->launch_us)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: expected microseconds in 0..1e6, got '%s'",
                    ch ? "--launch-channel-us" : "--launch-us", value ? value : "");
        return FALSE;
    }
    return TRUE;
}

/* --nodes and --gpus: whole numbers >= 1 (0 used to read as not given) */
static gboolean count_arg(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    sys_opts *o = data;
    bool nodes = !strcmp(name, "--nodes") || !strcmp(name, "-N");
    return cli_int_arg(nodes ? "--nodes" : "--gpus", value, 1, nodes ? TOPO_MAX_NODES : 1024,
                       nodes ? &o->nodes : &o->gpus, error);
}

GOptionGroup *sys_opts_group(sys_opts *o)
{
    GOptionEntry e[] = {
        {"topo", 't', 0, G_OPTION_ARG_STRING, &o->topo, "shipped system name or topology file", "T"},
        {"nodes", 'N', 0, G_OPTION_ARG_CALLBACK, (gpointer)count_arg, "servers joined by the scale-out fabric [1]", "N"},
        {"gpus", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)count_arg, "use the first G GPUs of each server [all]", "G"},
        {"fabric", 0, 0, G_OPTION_ARG_STRING, &o->fabric, "scale-out fabric (ib-hdr, ib-ndr, ...)", "F"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets, "override a topology parameter (repeatable)", "KEY=VALUE"},
        {"launch-us", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)launch_arg, "host launch cost per GPU kernel, us [the topology's calibration, else 2.5]", "US"},
        {"launch-channel-us", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)launch_arg, "host cost per channel of a GPU's kernel launch, us [0.1]", "US"},
        {"exact", 0, 0, G_OPTION_ARG_NONE, &o->exact, "simulate every rank, chunk and collective: no folded rings on "
         "large symmetric clusters, every NVLS chunk, no reuse of repeated collectives in replays (slower; "
         "docs/performance.md)", NULL},
        {0},
    };
    if (o->no_topo_short)
        e[0].short_name = 0;
    o->launch_us = -1; /* not given: the topology's calibrated value, else COLL_LAUNCH_US */
    o->launch_ch_us = -1; /* not given: COLL_LAUNCH_CH_US */
    GOptionGroup *g = g_option_group_new("system", "System options", "Show system options", o, NULL);
    g_option_group_add_entries(g, e);
    return g;
}

bool sys_check_p2p_env(const coll_nccl_env *e, const topo *t, GError **err)
{
    if (e->p2p_set && e->p2p_level < FAB_PATH_NVL && t->nvl_domain_nodes > 1 && t->nodes > 1) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE,
                    "NCCL_P2P_DISABLE / NCCL_P2P_LEVEL below NVL on an NVLink domain across servers (%s, %d nodes) is "
                    "not modelled: NCCL would move tray-to-tray traffic over the network",
                    t->name, t->nodes);
        return false;
    }
    return true;
}

topo *sys_opts_load(const sys_opts *o, GError **err)
{
    if (!o->topo) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "--topo is required (see 'conveyor topo list')");
        return NULL;
    }
    if (o->nodes < 0 || o->nodes > TOPO_MAX_NODES || o->gpus < 0 || o->gpus > 1024) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "--nodes must be in 1..%d and --gpus in 1..1024", TOPO_MAX_NODES);
        return NULL;
    }
    if ((o->launch_us != -1 && (o->launch_us < 0 || o->launch_us > 1e6)) ||
        (o->launch_ch_us != -1 && (o->launch_ch_us < 0 || o->launch_ch_us > 1e6))) {
        g_set_error(err, TOPO_ERROR, TOPO_ERROR_VALUE, "--launch-us and --launch-channel-us must be in 0..1e6");
        return NULL;
    }
    coll_nccl_env env; /* NCCL's channel knobs: a bad value is an input error here, before any work */
    if (!coll_nccl_env_read(&env, err))
        return NULL;
    topo_opts to = {.nodes = o->nodes, .gpus = o->gpus, .fabric = o->fabric, .sets = (const char *const *)o->sets};
    return topo_load(o->topo, &to, err);
}

void sys_opts_clear(sys_opts *o)
{
    g_free(o->topo);
    g_free(o->fabric);
    g_strfreev(o->sets);
}

void sys_from_topo(coll_system *s, const topo *t, const sys_opts *o)
{
    double launch = o->launch_us >= 0 ? o->launch_us : t->launch_us > 0 ? t->launch_us : COLL_LAUNCH_US;
    topo_coll_system(s, t, launch, o->gpus_per_thread);
    s->exact = o->exact;
    if (o->launch_ch_us >= 0)
        s->launch_ch_us = o->launch_ch_us;
    /* NCCL_MAX_NCHANNELS etc.: checked by sys_opts_load, which every caller ran */
    if (!coll_nccl_env_read(&s->nccl, NULL))
        s->nccl = (coll_nccl_env){0};
    coll_nccl_env_apply(&s->nccl, t->fab); /* NCCL_P2P_LEVEL: the routes inside a server */
}
