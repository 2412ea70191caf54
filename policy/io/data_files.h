// Where the installed data and configuration files are: the duet command and
// duet-emujob find the Gavel table, the traces and the price list here.
#pragma once

#include <string>

namespace duet {

// `rel` (e.g. "data/gavel/simulation_throughputs.json") under $DUET_DATA_DIR,
// the installed data directory, or the source tree; "" if none has it.
std::string find_data(const std::string& rel);
// `name` (e.g. "gpu-prices.csv") under $DUET_ETC_DIR, SYSCONFDIR/duet, or the
// source tree's etc/; "" if none has it.
std::string find_etc(const std::string& name);

}  // namespace duet
