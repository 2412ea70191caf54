// Whether slurmctld may act on a file (duet.conf, a model, the node speeds
// file): whoever can change one steers the scheduler, so only root and
// SlurmUser may be able to. Slurm-free: the plugin passes SlurmUser's uid in.
// Rules (duet.conf(5), FILE PERMISSIONS):
//  - the file (symbolic links followed) is owned by root or SlurmUser and is
//    not writable by group or others;
//  - the directory holding it, and the one holding the name given when that
//    is a symbolic link, is owned by root or SlurmUser and is not writable by
//    group or others unless its sticky bit is set (as /tmp: others may not
//    then rename or remove the file).
// Higher directories are not checked. The check is on the path; the load
// that follows reopens it, which is safe because nobody else can replace
// the file in a directory that passed.
#pragma once

#include <cstdint>
#include <string>

namespace duet::plugin {

// True when trusted; otherwise false and *error says why not, for one log
// line, e.g. "the file is writable by others (mode 0666); only root and
// SlurmUser (uid 64030) may be able to change it".
bool file_trusted(const std::string& path, std::uint32_t slurm_user_uid, std::string* error);

}  // namespace duet::plugin
