// Fuzz target: the scenario spec reader (duet-scenario(1)). InputError is the
// documented answer to bad input; a crash or any other exception is a finding.
// What it accepts must read back the same from format_spec.
#include <cstdlib>
#include <string>

#include "policy/io/csv.h"
#include "policy/scenario/spec.h"
#include "tests/fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  duet::ScenarioSpec s;
  try {
    duet::apply_spec_text(s, std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  } catch (const duet::InputError&) { return 0; }
  const std::string text = duet::format_spec(s);
  duet::ScenarioSpec again;
  duet::apply_spec_text(again, text, "again");  // throws (a finding) if the writer wrote what the reader refuses
  if (duet::format_spec(again) != text) std::abort();
  return 0;
}
