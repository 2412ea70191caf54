#include "policy/io/data_files.h"

#include <cstdlib>
#include <filesystem>
#include <initializer_list>

// Set by the build (policy/Makefile.inc) to the install and source locations.
#ifndef DUET_PKGDATADIR
#define DUET_PKGDATADIR ""
#endif
#ifndef DUET_SYSCONFDIR
#define DUET_SYSCONFDIR ""
#endif
#ifndef DUET_SRCDIR
#define DUET_SRCDIR ""
#endif

namespace duet {

static std::string first_existing(std::initializer_list<std::string> paths) {
  for (const auto& p : paths)
    if (!p.empty() && std::filesystem::is_regular_file(p)) return p;
  return "";
}

static std::string env_join(const char* var, const std::string& rel) {
  const char* v = std::getenv(var);
  return v && *v ? std::string(v) + "/" + rel : "";
}

std::string find_data(const std::string& rel) {
  return first_existing(
      {env_join("DUET_DATA_DIR", rel), std::string(DUET_PKGDATADIR) + "/" + rel, std::string(DUET_SRCDIR) + "/" + rel});
}

std::string find_etc(const std::string& name) {
  return first_existing({env_join("DUET_ETC_DIR", name), std::string(DUET_SYSCONFDIR) + "/duet/" + name,
                         std::string(DUET_SRCDIR) + "/etc/" + name});
}

}  // namespace duet
