// The installed <slurm/spank.h> for C++: it declares the hooks before its own
// extern "C", so the whole include is wrapped here. Include this, never
// spank.h directly.
#pragma once
extern "C" {
#include <slurm/spank.h>
}
