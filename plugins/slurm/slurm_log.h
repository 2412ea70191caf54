// Logging for the plugins' Slurm translation units: Slurm's log functions,
// filtered by duet.conf's LogLevel. Errors always go out.
//
// Slurm's DebugFlags turn the per-job and per-re-score lines on as for any
// other plugin (`scontrol setdebugflags +Priority` for the ordering plugins,
// `+SelectType` for select/duet, DebugFlags= in slurm.conf): a file that
// logs for one of them defines DUET_DEBUG_FLAG (DEBUG_FLAG_PRIO or
// DEBUG_FLAG_SELECT_TYPE) before including this header.
#pragma once

#include "plugins/seam/duet_conf.h"
#include "plugins/slurm/slurm_internal.h"

#ifndef DUET_DEBUG_FLAG
#define DUET_DEBUG_FLAG 0
#endif
#define DUET_FLAGGED() ((slurm_conf.debug_flags & (DUET_DEBUG_FLAG)) != 0)

// Messages that say what the plugin decided (loaded, model picked, fallback).
#define DUET_INFO(level, fmt, ...)                \
  do {                                            \
    if ((level) >= duet::plugin::LogLevel::kInfo) \
      info(fmt, ##__VA_ARGS__);                   \
    else                                          \
      debug(fmt, ##__VA_ARGS__);                  \
  } while (0)

// One line per re-score / observation.
#define DUET_VERBOSE(level, fmt, ...)                                  \
  do {                                                                 \
    if ((level) >= duet::plugin::LogLevel::kVerbose || DUET_FLAGGED()) \
      info(fmt, ##__VA_ARGS__);                                        \
    else                                                               \
      debug2(fmt, ##__VA_ARGS__);                                      \
  } while (0)

// One line per job.
#define DUET_DEBUG(level, fmt, ...)                                  \
  do {                                                               \
    if ((level) >= duet::plugin::LogLevel::kDebug || DUET_FLAGGED()) \
      info(fmt, ##__VA_ARGS__);                                      \
    else                                                             \
      debug3(fmt, ##__VA_ARGS__);                                    \
  } while (0)
