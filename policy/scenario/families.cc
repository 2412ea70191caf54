// The named presets of `duet scenario` (duet scenario list prints them). A
// preset is spec text, so it means exactly what the same lines in a file mean.
#include "policy/scenario/spec.h"

namespace duet {

namespace {

// Cluster families. Types from Gavel's table (K80, P100, V100) keep their
// per-job-type speeds; the others get one speed for every job type.
const Preset kFamilies[] = {
    {"mixed", "2-8 GPU types (up to 3 from Gavel's table, the rest 0.2-3x V100), 64-1024 GPUs, 8 a machine",
     "cluster_source = synthetic\ncluster_gpus = 64..1024\ngpu_types = 2..8\nspeed = 0.2..3\n"
     "table_types = 3\ngpus_per_machine = 8\nrack_machines = 8\n"},
    {"gavel", "Gavel's K80, P100 and V100 only (2-3 types), 16-256 GPUs, 4 a machine",
     "cluster_source = synthetic\ncluster_gpus = 16..256\ngpu_types = 2..3\nspeed = 0.2..3\n"
     "table_types = 3\ngpus_per_machine = 4\nrack_machines = 8\n"},
    {"small", "2-3 GPU types, 16-64 GPUs, 2 or 4 a machine (fast to simulate)",
     "cluster_source = synthetic\ncluster_gpus = 16..64\ngpu_types = 2..3\nspeed = 0.2..3\n"
     "table_types = 3\ngpus_per_machine = 2 4\nrack_machines = 4\n"},
    {"large", "4-8 GPU types, 1024-4096 GPUs, 8 a machine",
     "cluster_source = synthetic\ncluster_gpus = 1024..4096\ngpu_types = 4..8\nspeed = 0.2..3\n"
     "table_types = 3\ngpus_per_machine = 8\nrack_machines = 16\n"},
    {"flat", "2-8 types, none from Gavel's table (one speed each, 0.2-3x V100), 64-4096 GPUs, 4 or 8 a machine",
     "cluster_source = synthetic\ncluster_gpus = 64..4096\ngpu_types = 2..8\nspeed = 0.2..3\n"
     "table_types = 0\ngpus_per_machine = 4 8\nrack_machines = 8\n"},
    {"pai", "a seeded sample of Alibaba PAI's machines (its GPU mix), 64-1024 GPUs",
     "cluster_source = pai\ncluster_gpus = 64..1024\n"},
};

// Workloads: where jobs come from and how they arrive.
const Preset kWorkloads[] = {
    {"lognormal", "Poisson arrivals, log-normal durations (median 30 min, sigma 1.6)",
     "source = synthetic\narrival = poisson\nduration = lognormal\nduration_median_s = 1800\n"
     "duration_sigma = 1.6\n"},
    {"heavy-tail", "Poisson arrivals, Pareto durations with tail index 1.1-2.5",
     "source = synthetic\narrival = poisson\nduration = pareto\npareto_alpha = 1.1..2.5\npareto_min_s = 300\n"},
    {"diurnal", "day/night arrival cycle (amplitude 0.3-0.8), log-normal durations",
     "source = synthetic\narrival = diurnal\ndiurnal_amplitude = 0.3..0.8\nduration = lognormal\n"},
    {"bursty", "two-state MMPP arrivals (bursts 5-20x the calm rate), Pareto durations 1.3-2.5",
     "source = synthetic\narrival = mmpp\nburst_ratio = 5..20\nburst_fraction = 0.05..0.2\n"
     "duration = pareto\npareto_alpha = 1.3..2.5\n"},
    {"philly", "jobs resampled from all of Philly (durations, GPUs, VCs), Poisson arrivals",
     "source = philly\narrival = poisson\n"},
    {"philly-vc", "jobs resampled from one Philly virtual cluster, diurnal arrivals",
     "source = philly-vc\narrival = diurnal\ndiurnal_amplitude = 0.3..0.8\n"},
};

}  // namespace

std::span<const Preset> cluster_families() { return kFamilies; }
std::span<const Preset> workload_presets() { return kWorkloads; }

}  // namespace duet
