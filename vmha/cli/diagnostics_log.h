// `--log FILE` of `vmha run` and `vmha backup`: vmha's own diagnostics
// (backup lost, primary lost, takeover, ...) go to FILE, so that file
// descriptor 2 carries only the guest's standard error. The SPANK plugin
// needs this: the guest's stderr is a job's output and must hold exactly the
// program's bytes (the backup counts released bytes by the file's size).
#pragma once
#include <string>

namespace vmha {

// Points the C `stderr` stream at FILE (appending, line buffered). Returns
// false with errno set when FILE cannot be opened.
bool redirect_diagnostics(const std::string& path);

}  // namespace vmha
