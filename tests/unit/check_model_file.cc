// Unit tests of the model file (policy/learn/model/model_file.h): round trip, and a
// clear error for a wrong version, a truncated or corrupt file, and wrong
// shapes. Torch-free translation unit (the initial model comes from
// libduetlearn_nets, policy/learn/nets).
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <algorithm>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "policy/learn/agents/ordering_agent.h"
#include "policy/learn/agents/placement_head.h"
#include "policy/learn/gp/binary_io.h"
#include "policy/learn/model/model_combine.h"
#include "policy/learn/model/model_file.h"
#include "policy/learn/nets/model_init.h"
#include "tests/unit/in_child.h"
#include "tests/unit/test_data.h"

#include <check.h>  // last: it defines a fail() macro

using namespace duet::learn;

namespace {

std::string temp_path(const char* tag) { return "/tmp/check_model_file_" + std::to_string(getpid()) + "_" + tag; }

Model sample_model() {
  GpHyper gp;
  gp.beta = 0.3;
  gp.walk_weights = {0.1, 0.6, 0.3};
  gp.noise_var = 0.004;
  Model m = make_initial_model(NetConfig{}, gp, 7);
  m.job_types = {"resnet50", "transformer", "lm"};
  m.provenance = "duet train --seed 7 (test)";
  m.job_norm.mean[3] = 12.5f;
  m.job_norm.scale[3] = 0.25f;
  return m;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

void expect_load_error(const std::string& path, const char* needle) {
  try {
    load_model(path);
    ck_abort_msg("bad model file loaded (expected an error with \"%s\")", needle);
  } catch (const FormatError& e) {
    const std::string msg = e.what();
    ck_assert_msg(msg.find(needle) != std::string::npos, "message \"%s\" lacks \"%s\"", msg.c_str(), needle);
    ck_assert_msg(msg.find(path) != std::string::npos, "message \"%s\" does not name the file", msg.c_str());
  }
}

// Loads `path` in a child with a deadline and an address-space cap 512 MiB
// above what is mapped (LibTorch alone maps a lot): a FIFO must not hang the
// test, /dev/zero must not eat the machine. Returns the FormatError text, or
// "LOADED", "HUNG", "SIGNAL n", "OTHER: <what>".
std::string load_error_in_child(const std::string& path) {
  return test_support::in_child(
      [&]() -> std::string {
        try {
          load_model(path);
          return "LOADED";
        } catch (const FormatError& e) { return e.what(); } catch (const std::exception& e) {
          return std::string("OTHER: ") + e.what();
        }
      },
      10, 512ul << 20);
}

void expect_child_error(const std::string& path, const char* needle) {
  const std::string msg = load_error_in_child(path);
  ck_assert_msg(msg.find(needle) != std::string::npos, "loading %s: \"%s\" lacks \"%s\"", path.c_str(), msg.c_str(),
                needle);
  ck_assert_msg(msg.find(path) != std::string::npos, "message \"%s\" does not name the file", msg.c_str());
}

}  // namespace

// Not a regular file: refused at once, naming the file (before: /dev/zero was
// read until bad_alloc, a FIFO blocked the loader for ever).
START_TEST(special_files_refused) {
  expect_child_error("/dev/zero", "is a character device, expected a regular file (duet model file)");
  const std::string fifo = temp_path("fifo");
  ck_assert_int_eq(mkfifo(fifo.c_str(), 0600), 0);
  expect_child_error(fifo, "is a FIFO, expected a regular file");
  std::remove(fifo.c_str());
  expect_child_error("/tmp", "is a directory");
}
END_TEST

// A file over kMaxModelBytes is refused by its size before a byte is read
// (before: a 1.5 GB file was read whole before the checksum failed).
START_TEST(oversized_refused_before_reading) {
  const std::string path = temp_path("big");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(ftruncate(fd, off_t{1536} << 20), 0);  // sparse: no disk used
  close(fd);
  expect_child_error(path, "1610612736 bytes, more than the 268435456 bytes a duet model file may have");
  std::remove(path.c_str());
}
END_TEST

// Dimensions 2^20 x 2^20 x 2^20 x 8 wrap a 64-bit count to a negative number
// that passed the "at most 2^26 values" check (then std::length_error).
START_TEST(weight_count_overflow_refused) {
  const std::string path = temp_path("ovf");
  save_model(sample_model(), path);
  auto payload = read_container(path, std::string_view(kModelMagic, 8), kModelVersion, "duet model file");
  const std::string name = "ordering.enc1.weight";
  auto at = std::search(payload.begin(), payload.end(), name.begin(), name.end());
  ck_assert(at != payload.end());
  payload.erase(at + static_cast<std::ptrdiff_t>(name.size()), payload.end());
  ByteWriter w;
  w.u32(4);
  for (std::int64_t d : {std::int64_t{1} << 20, std::int64_t{1} << 20, std::int64_t{1} << 20, std::int64_t{8}})
    w.i64(d);
  payload.insert(payload.end(), w.bytes().begin(), w.bytes().end());
  write_container(path, std::string_view(kModelMagic, 8), kModelVersion, payload);
  expect_load_error(path, "ordering.enc1.weight: shape [1048576,1048576]... holds more than 67108864 values");
  // a count that fits but exceeds the bytes left: refused before allocating
  payload.erase(payload.end() - 32, payload.end());
  ByteWriter v;
  for (std::int64_t d : {std::int64_t{1} << 13, std::int64_t{1} << 13, std::int64_t{1}, std::int64_t{1}}) v.i64(d);
  payload.insert(payload.end(), v.bytes().begin(), v.bytes().end());
  write_container(path, std::string_view(kModelMagic, 8), kModelVersion, payload);
  expect_load_error(path, "ordering.enc1.weight: 67108864 values do not fit in the 0 bytes left");
  std::remove(path.c_str());
}
END_TEST

// decode_model (the in-memory entry point) checks what load_model checks, and
// the shipped model still loads byte for byte.
START_TEST(decode_in_memory_and_shipped_model) {
  const std::string path = temp_path("mem");
  save_model(sample_model(), path);
  const std::string good = read_all(path);
  Model a = decode_model(good, "mem");
  ck_assert(a.weights.size() == sample_model().weights.size());
  try {
    decode_model(good.substr(0, 40), "mem\x1b[2J");
    ck_abort_msg("truncated model decoded");
  } catch (const FormatError& e) {
    // the name is escaped in the message: no terminal control reaches a log
    ck_assert_msg(std::string(e.what()).find("mem\\x1b[2J: ") == 0, "%s", e.what());
  }
  std::remove(path.c_str());
  Model shipped = load_model(test_support::source_path("models/duet.model"));
  ck_assert(!shipped.weights.empty());
}
END_TEST

START_TEST(round_trip) {
  const std::string path = temp_path("rt");
  Model m = sample_model();
  save_model(m, path);
  Model b = load_model(path);
  ck_assert_uint_eq(b.weights.size(), m.weights.size());
  for (std::size_t i = 0; i < m.weights.size(); ++i) {
    ck_assert_str_eq(b.weights[i].name.c_str(), m.weights[i].name.c_str());
    ck_assert(b.weights[i].shape == m.weights[i].shape && b.weights[i].data == m.weights[i].data);
  }
  ck_assert(b.job_norm.mean == m.job_norm.mean && b.job_norm.scale == m.job_norm.scale);
  ck_assert(b.machine_norm.scale == m.machine_norm.scale && b.cluster_norm.mean == m.cluster_norm.mean);
  ck_assert(b.job_types == m.job_types && b.provenance == m.provenance);
  ck_assert(b.gp.beta == 0.3 && b.gp.walk_weights == m.gp.walk_weights && b.gp.noise_var == 0.004);
  ck_assert(b.nets.ordering.embed == m.nets.ordering.embed && b.nets.critic.hidden == m.nets.critic.hidden);

  // the loaded model drives both agents exactly like the original
  std::vector<float> jobs(5 * m.nets.ordering.job_features, 0.3f), cluster(m.nets.ordering.cluster_features, 1.0f);
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i] = std::sin(static_cast<float>(i));
  std::vector<float> s1, s2, p1, p2;
  OrderingAgent(m).score(jobs, 5, cluster, {}, s1);
  OrderingAgent(b).score(jobs, 5, cluster, {}, s2);
  ck_assert(s1 == s2);
  std::vector<float> rows(7 * m.nets.placement.machine_features);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = std::cos(static_cast<float>(i));
  PlacementHead(m).score(rows, 7, {}, p1);
  PlacementHead(b).score(rows, 7, {}, p2);
  ck_assert(p1 == p2);
  std::remove(path.c_str());
}
END_TEST

START_TEST(wrong_version_truncated_corrupt) {
  const std::string path = temp_path("bad");
  save_model(sample_model(), path);
  const std::string good = read_all(path);

  std::string v = good;
  v[8] = 9;  // format version field
  write_all(path, v);
  expect_load_error(path, "format version 9, this build reads versions 1 to 3");

  write_all(path, good.substr(0, good.size() / 2));
  expect_load_error(path, "truncated");
  write_all(path, good.substr(0, 10));
  expect_load_error(path, "truncated");
  write_all(path, "");
  expect_load_error(path, "truncated");

  std::string flipped = good;
  flipped[good.size() - 3] ^= 0x10;
  write_all(path, flipped);
  expect_load_error(path, "checksum");

  std::string magic = good;
  magic.replace(0, 8, "DUETGPST");
  write_all(path, magic);
  expect_load_error(path, "not a duet model file");

  write_all(path, good + "x");
  expect_load_error(path, "trailing bytes");

  try {
    load_model(path + ".does-not-exist");
    ck_abort_msg("missing file loaded");
  } catch (const FormatError& e) { ck_assert(std::string(e.what()).find("cannot open") != std::string::npos); }
  std::remove(path.c_str());
}
END_TEST

// A spread rule other than fastest is written as format 3 (older builds
// refuse it by its version); fastest stays format 1 or 2, byte for byte as
// before. Out-of-range values in a format 3 file are refused, naming them.
START_TEST(spread_rule_is_format_3) {
  const std::string path = temp_path("spread");
  Model m = sample_model();
  save_model(m, path);
  const std::string plain = read_all(path);
  ck_assert_uint_eq(read_container_versions(path, std::string_view(kModelMagic, 8), 1, 9, "m").version, 1);
  for (SpreadSets rule : {SpreadSets::tight, SpreadSets::slow, SpreadSets::learned}) {
    m.spread = rule;
    save_model(m, path);
    ck_assert_uint_eq(read_container_versions(path, std::string_view(kModelMagic, 8), 1, 9, "m").version, 3);
    ck_assert(load_model(path).spread == rule);
  }
  m.spread = SpreadSets::fastest;
  save_model(m, path);
  ck_assert(read_all(path) == plain);

  // the payload: 10 network sizes, the preemptive flag, the rule
  m.spread = SpreadSets::tight;
  save_model(m, path);
  VersionedPayload v = read_container_versions(path, std::string_view(kModelMagic, 8), 3, 3, "m");
  ck_assert_uint_eq(v.payload.at(44), 1);
  auto with = [&](std::size_t at, std::uint8_t value) {
    std::vector<std::uint8_t> p = v.payload;
    p[at] = value;
    write_container(path, std::string_view(kModelMagic, 8), 3, p);
  };
  with(44, 0);
  expect_load_error(path, "format 3 is written for a spread rule other than fastest");
  with(44, 7);
  expect_load_error(path, "it is 7");
  with(40, 9);
  expect_load_error(path, "the preemptive flag must be 0 (none), 1 (LAS prior) or 2 (Gittins prior), it is 9");
  with(40, 2);  // format 3 holds a preemptive model too: past the flag, it lacks the gate
  expect_load_error(path, "ordering.gate.weight missing");
  std::remove(path.c_str());
}
END_TEST

START_TEST(wrong_shapes) {
  const std::string path = temp_path("shape");
  save_model(sample_model(), path);
  // A file whose declared job feature count (first size field) disagrees with
  // its weights, with a valid checksum: the shape check must catch it.
  auto payload = read_container(path, std::string_view(kModelMagic, 8), kModelVersion, "duet model file");
  payload[0] = 17;
  write_container(path, std::string_view(kModelMagic, 8), kModelVersion, payload);
  expect_load_error(path, "job_norm: 16 means and 16 scales, the networks need 17");
  payload[0] = 16;
  payload[8] = 40;  // ordering.hidden 48 -> 40
  write_container(path, std::string_view(kModelMagic, 8), kModelVersion, payload);
  expect_load_error(path, "ordering.enc1.weight: shape [48,16], the networks declared in the model need [40,16]");

  // weights shaped for another network
  Model m = sample_model();
  for (auto& a : m.weights)
    if (a.name == "ordering.enc2.weight") a.shape = {a.shape[1], a.shape[0]};
  try {
    save_model(m, path);
    ck_abort_msg("a mis-shaped model was saved");
  } catch (const FormatError& e) {
    ck_assert_msg(std::string(e.what()).find(
                      "ordering.enc2.weight: shape [48,32], the networks declared in the model need [32,48]") !=
                      std::string::npos,
                  "%s", e.what());
  }
  Model missing = sample_model();
  missing.weights.pop_back();
  ck_assert_int_eq(
      [&] {
        try {
          missing.validate();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what()).find("critic.v2.bias missing") != std::string::npos ? 1 : 2;
        }
        return 0;
      }(),
      1);

  // a model built for other feature extractors
  Model good = sample_model();
  try {
    good.check_inputs(good.nets.ordering.job_features + 1, good.nets.ordering.cluster_features,
                      good.nets.placement.machine_features);
    ck_abort_msg("input width mismatch accepted");
  } catch (const std::invalid_argument& e) {
    ck_assert(std::string(e.what()).find("model expects 16 job features, this build produces 17") != std::string::npos);
  }
  good.check_inputs(16, 8, 9);
  std::remove(path.c_str());
}
END_TEST

// combine_agents: each agent scores exactly as in the model it came from.
START_TEST(combine_takes_each_agent_whole) {
  Model a = sample_model();
  Model b = make_initial_model(NetConfig{}, GpHyper{}, 99);
  b.job_types = {"bert"};
  b.machine_norm.mean[2] = 0.5f;
  b.provenance = "place side";
  b.spread = SpreadSets::tight;  // the placement agent's rule goes with it
  Model c = combine_agents(a, b);
  ck_assert(c.spread == SpreadSets::tight && combine_agents(b, a).spread == SpreadSets::fastest);
  std::vector<float> jobs(4 * 16), cluster(8, 0.5f), rows(3 * 9), sa, sc, pb, pc, pa;
  for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i] = std::sin(0.7f * static_cast<float>(i));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = std::cos(0.3f * static_cast<float>(i));
  OrderingAgent(a).score(jobs, 4, cluster, {}, sa);
  OrderingAgent(c).score(jobs, 4, cluster, {}, sc);
  ck_assert(sa == sc);
  PlacementHead(b).score(rows, 3, {}, pb);
  PlacementHead(c).score(rows, 3, {}, pc);
  PlacementHead(a).score(rows, 3, {}, pa);
  ck_assert(pb == pc);
  ck_assert(pa != pc);  // the sides really differ
  ck_assert(c.job_types == b.job_types && c.gp.beta == b.gp.beta && c.job_norm.mean == a.job_norm.mean);
  ck_assert(c.weight("critic.v2.bias").data == a.weight("critic.v2.bias").data);
  ck_assert(c.provenance.find("place side") != std::string::npos);

  NetConfig other;
  other.placement.hidden = 16;
  Model d = make_initial_model(other, GpHyper{}, 1);
  try {
    combine_agents(a, d);
    ck_abort_msg("models with different networks combined");
  } catch (const std::invalid_argument& e) {
    ck_assert_msg(std::string(e.what()).find("different networks") != std::string::npos, "%s", e.what());
  }
}
END_TEST

int main() {
  Suite* s = suite_create("model_file");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, round_trip);
  tcase_add_test(tc, wrong_version_truncated_corrupt);
  tcase_add_test(tc, wrong_shapes);
  tcase_add_test(tc, spread_rule_is_format_3);
  tcase_add_test(tc, combine_takes_each_agent_whole);
  tcase_add_test(tc, special_files_refused);
  tcase_add_test(tc, oversized_refused_before_reading);
  tcase_add_test(tc, weight_count_overflow_refused);
  tcase_add_test(tc, decode_in_memory_and_shipped_model);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
