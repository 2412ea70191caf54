#!/usr/bin/env bash
# Each plugin's shared object exports exactly what Slurm looks up in it (the
# plugin constants, init/fini, its API's functions) and, for priority/duet,
# the three slurmctld globals it stands in for outside slurmctld. The C++
# libraries linked into it (policy/, the seam, Eigen code) stay inside:
# exported, their symbols could bind to another plugin's copies in one
# process.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/plugin_lib.sh"
command -v nm >/dev/null || skip "nm (binutils) not installed"
[ -f "$PRIO_LIBS/priority_duet.so" ] && [ -f "$SELECT_LIBS/select_duet.so" ] && [ -f "$SITE_LIBS/site_factor_duet.so" ] \
  || skip "plugins not built in $top_builddir (configure found no Slurm source?)"

# check SO ALLOWED_REGEX REQUIRED...: every defined dynamic symbol matches
# ALLOWED_REGEX, and each REQUIRED one is there.
check() {
  local so=$1 allowed=$2
  shift 2
  local syms
  syms=$(nm -D --defined-only "$so" | awk '{print $3}') || fail "nm $so"
  local extra
  extra=$(grep -Ev "$allowed" <<<"$syms" | head -5 || true)
  [ -z "$extra" ] || fail "$(basename "$so") exports more than Slurm's API, e.g.: $(tr '\n' ' ' <<<"$extra")"
  for s in "$@"; do
    grep -qx "$s" <<<"$syms" || fail "$(basename "$so") does not export $s"
  done
  note "$(basename "$so"): $(wc -l <<<"$syms") symbols"
}

base='plugin_(name|type|version|id)|init|fini'
check "$PRIO_LIBS/priority_duet.so" "^($base|priority_p_[a-z_]+|job_list|last_job_update|slurmctld_tres_cnt)\$" \
  plugin_name plugin_type plugin_version init fini priority_p_set priority_p_get_priority_factors_list \
  job_list last_job_update slurmctld_tres_cnt
check "$SELECT_LIBS/select_duet.so" "^($base|select_p_[a-z_]+)\$" \
  plugin_name plugin_type plugin_version plugin_id init fini select_p_job_test select_p_node_init
check "$SITE_LIBS/site_factor_duet.so" "^($base|site_factor_p_[a-z_]+)\$" \
  plugin_name plugin_type plugin_version init fini site_factor_p_set site_factor_p_update
