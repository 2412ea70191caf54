#!/usr/bin/env bash
# plugin_preempt_restart.sh with priority/duet (the learned order alone, no
# priority/multifactor): its preempted jobs' earlier service, kept in
# StateSaveLocation/duet_preempt_state.priority_duet, survives a SIGKILL of
# slurmctld, and the job still ranks (and is prioritised) below a fresh twin.
PREEMPT_PLUGIN=priority/duet
. "$(dirname "$0")/plugin_preempt_restart.sh"
