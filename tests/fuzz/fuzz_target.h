// The libFuzzer entry point every target defines. The same sources build the
// clang fuzzers (make fuzz) and the g++ corpus replays (make check).
#pragma once
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
