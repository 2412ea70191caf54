// Logging for the plugins' Slurm translation units: Slurm's log functions,
// filtered by duet.conf's LogLevel. Errors always go out.
#pragma once

#include "plugins/seam/duet_conf.h"
#include "plugins/slurm/slurm_internal.h"

// Messages that say what the plugin decided (loaded, model picked, fallback).
#define DUET_INFO(level, fmt, ...)                \
  do {                                            \
    if ((level) >= duet::plugin::LogLevel::kInfo) \
      info(fmt, ##__VA_ARGS__);                   \
    else                                          \
      debug(fmt, ##__VA_ARGS__);                  \
  } while (0)

// One line per re-score / observation.
#define DUET_VERBOSE(level, fmt, ...)                \
  do {                                               \
    if ((level) >= duet::plugin::LogLevel::kVerbose) \
      info(fmt, ##__VA_ARGS__);                      \
    else                                             \
      debug2(fmt, ##__VA_ARGS__);                    \
  } while (0)

// One line per job.
#define DUET_DEBUG(level, fmt, ...)                \
  do {                                             \
    if ((level) >= duet::plugin::LogLevel::kDebug) \
      info(fmt, ##__VA_ARGS__);                    \
    else                                           \
      debug3(fmt, ##__VA_ARGS__);                  \
  } while (0)
