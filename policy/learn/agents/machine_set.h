// Candidate machines for a job that no single machine can hold.
//
// A job spread over machines runs at the speed of its slowest part (the
// simulator's performance model; data-parallel training waits for its
// slowest worker every step), so one slow machine in the set drags all its
// GPUs down. Scoring machines one by one ignores that: on a cluster of many
// 1-GPU T4s beside 4-GPU X100s, an 8-GPU job got X100, V100, T4 and K80 GPUs
// and ran at the K80's speed, 30x its duration. The placement routine
// (placement_routine.h) narrows the candidates with this first, for the
// simulator's "duet" placement and the trainer's rollouts; select/duet ranks
// the nodes below the floor last. Which set a model takes is its spread rule
// (spread_sets.h). models/duet.model was trained before the trainer did
// (models/README.md). A job that one machine could hold has a floor of its
// own (one_machine_speed_limit below).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "policy/core/policy.h"
#include "policy/learn/model/spread_sets.h"

namespace duet::learn {

// The highest speed such that the candidates at least that fast have `gpus`
// free GPUs together; 0 when one candidate holds the job alone (no set is
// needed) or all of them together cannot.
double fastest_floor(std::span<const MachineView> machines, int gpus, std::span<const std::uint32_t> cand);

// The spread floor: a job no machine could hold alone uses only machines at
// least kSpreadSpeedShare times as fast as the floor of its fastest set on the
// idle cluster, and waits while those have too few GPUs free. Its set runs at
// the slowest machine's speed, so a set that takes the one slow machine free
// now holds every fast GPU in it at that speed until the job ends; waiting
// for faster ones lowered mean JCT and fees on held-out sources and on
// Philly (models/HISTORY.md, *The spread floor*). The share is of the idle
// cluster's floor, not of what is free now, so the job never waits for ever
// on an idle cluster.
inline constexpr double kSpreadSpeedShare = 0.5;

// The floor holds a job only while it has waited less than this (seconds
// pending): on a busy cluster the fast machines may never all be free at
// once while smaller jobs keep taking them (a 16-GPU job waited 17 days).
// Four hours lowered mean JCT on held-out scenarios not used to choose it,
// and raised it on Philly, whose large jobs run for days (models/HISTORY.md,
// *The floor's time limit*).
inline constexpr double kSpreadFloorMaxWaitS = 4 * 3600.0;
inline bool spread_floor_holds(double wait_s) { return wait_s < kSpreadFloorMaxWaitS; }

// `share` times fastest_floor over `cand` with every GPU free; 0 when one
// candidate could hold the job alone or all together could not.
double spread_speed_limit(std::span<const MachineView> machines, int gpus, std::span<const std::uint32_t> cand,
                          double share = kSpreadSpeedShare);

// The one-machine floor: a job one machine could hold alone likewise uses
// only machines at least `share` times as fast as the fastest that could
// hold it, and waits while those have no room, but for at most
// kOneMachineFloorMaxWaitS: a job on one machine holds no other GPUs at a
// slow machine's speed, so it waits less. And only where the machines at or
// above that speed hold kFloorCapacityShare of the candidates' GPUs: on a
// cluster of 12 K80 machines and one P100 machine every small job queued for
// the P100 (2.5x the mean JCT). Mean JCT and fees fell on held-out scenarios
// not used to choose these values; on Philly on PAI's mix mean JCT rose 3-6%
// (models/HISTORY.md, *The one-machine floor*).
inline constexpr double kOneMachineFloorMaxWaitS = 30 * 60.0;
inline constexpr double kFloorCapacityShare = 0.25;

// `share` times the speed of the fastest of `cand` with `gpus` GPUs in all;
// 0 when none has, or when those at least that fast have less than
// kFloorCapacityShare of cand's GPUs.
double one_machine_speed_limit(std::span<const MachineView> machines, int gpus, std::span<const std::uint32_t> cand,
                               double share = kSpreadSpeedShare);

}  // namespace duet::learn
