// Slurm's internal headers for the plugins' Slurm-facing translation units
// only (never include this next to LibTorch: log.h's debug() macro breaks ATen).
// Built with -I$(SLURM_SRC_DIR) first, so "config.h" is Slurm's.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wparentheses"  // select.h: uint32_t (*plugin_id);
extern "C" {
#include "config.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/assoc_mgr.h"
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/plugin.h"
#include "src/common/select.h"
#include "src/common/slurm_accounting_storage.h"
#include "src/common/slurm_priority.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/state_save.h"
}
#pragma GCC diagnostic pop
