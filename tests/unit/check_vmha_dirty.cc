// Dirty tracking is exact: a guest that writes a known set of pages per step
// (tests/vmha/dirty_steps.c) is reported exactly that set plus the page the
// VMM wrote for it, under the dirty ring, the dirty bitmap and the hot
// tracker (hot_tracker.h: pages rewritten every step stay writable and are
// reported at every checkpoint).
#include <elf.h>
#include <sys/syscall.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/vmm/vm.h"

#include <check.h>
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

// Address of a symbol in an ELF executable's symbol table (0 if absent).
uint64_t symbol_address(const std::string& path, const char* name) {
  std::string b = vmha_test::slurp(path);
  if (b.size() < sizeof(Elf64_Ehdr)) return 0;
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, b.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    if (sh.sh_type != SHT_SYMTAB) continue;
    Elf64_Shdr strtab;
    std::memcpy(&strtab, b.data() + eh.e_shoff + sh.sh_link * sizeof strtab, sizeof strtab);
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, b.data() + sh.sh_offset + off, sizeof sym);
      if (std::strcmp(b.data() + strtab.sh_offset + sym.st_name, name) == 0) return sym.st_value;
    }
  }
  return 0;
}

struct StepReport {
  int steps_checked = 0;
  std::vector<std::string> problems;
};

// `rewrite_page0`: the guest also writes page 0 at every step. `running`:
// steps at which the test first harvests as a pre-copy would (the guest
// running), then as at a checkpoint; the union is checked.
StepReport run_steps(TrackerKind kind, bool rewrite_page0 = false, bool running = false) {
  StepReport rep;
  std::string prog = vmha_test::builddir() + "/tests/vmha/dirty_steps";
  uint64_t buffer = symbol_address(prog, "dirty_buffer");
  ck_assert_msg(buffer != 0, "no dirty_buffer symbol in %s", prog.c_str());
  ElfImage img;
  Status s = read_elf_file(prog, &img);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  VmOptions o;
  o.tracker = kind;
  o.memory_bytes = 256 << 20;
  std::unique_ptr<Vm> vm;
  s = Vm::create(o, &vm);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  std::vector<std::string> argv{prog};
  if (rewrite_page0) argv.push_back("hot");
  s = vm->load(img, prog, argv, {});
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  int step = 0;
  const uint64_t page0 = vm->guest_physical(buffer) >> 12;
  vm->set_syscall_hook([&](Vm& v, uint64_t nr, uint64_t) {
    if (nr != 110) return HookAction::kContinue;  // getppid marks the end of a step
    ++step;
    // The look before a harvest sees at least what the harvest returns
    // (the dirty ring; the bitmap tracker sees only the VMM's writes).
    uint64_t pending = v.tracker().pending_pages();
    std::vector<uint64_t> got, before;
    if (running && step % 2 == 0) {
      const bool was_hot = v.tracker().hot_pages() > 0;  // page 0 from step 2 on
      Status h = v.tracker().harvest_running(before);
      if (!h.ok()) rep.problems.push_back(h.message());
      if (was_hot && std::count(before.begin(), before.end(), page0))
        rep.problems.push_back("step " + std::to_string(step) + ": a running harvest reported a hot page");
    }
    Status h = v.tracker().harvest(got);
    if (!h.ok()) rep.problems.push_back(h.message());
    if (kind == TrackerKind::kHot && step >= 3 && v.tracker().hot_pages() != (rewrite_page0 ? 1u : 0u))
      rep.problems.push_back("step " + std::to_string(step) + ": " + std::to_string(v.tracker().hot_pages()) +
                             " hot pages");
    got.insert(got.end(), before.begin(), before.end());
    std::sort(got.begin(), got.end());
    if (v.tracker().pending_pages() != 0) rep.problems.push_back("pages pending right after a harvest");
    if (kind == TrackerKind::kRing && pending < got.size())
      rep.problems.push_back("step " + std::to_string(step) + ": " + std::to_string(pending) + " pages pending, " +
                             std::to_string(got.size()) + " harvested");
    if (step < 2) return HookAction::kContinue;  // step 1 also holds the loader's writes
    std::set<uint64_t> want;
    for (uint64_t p = 0; p < 64; ++p)
      if ((p * 7 + step * 3) % 5 == 0) want.insert(v.guest_physical(buffer + p * 4096) >> 12);
    want.insert(v.guest_physical(buffer + ((step * 11) % 64) * 4096) >> 12);  // the VMM's getrandom write
    if (rewrite_page0) want.insert(page0);
    std::set<uint64_t> have(got.begin(), got.end());
    if (have != want) {
      std::string msg = "step " + std::to_string(step) + ": expected " + std::to_string(want.size()) + " pages, got " +
                        std::to_string(have.size()) + "; extra:";
      for (uint64_t p : have)
        if (!want.count(p)) msg += " " + std::to_string(p);
      msg += "; missing:";
      for (uint64_t p : want)
        if (!have.count(p)) msg += " " + std::to_string(p);
      rep.problems.push_back(msg);
    }
    ++rep.steps_checked;
    return HookAction::kContinue;
  });
  RunResult r = vm->run();
  ck_assert_msg(r.end == RunResult::End::kExited && r.code == 0, "guest did not exit 0: %s", r.message.c_str());
  return rep;
}

void check_exact(TrackerKind kind) {
  StepReport rep = run_steps(kind);
  ck_assert_int_eq(rep.steps_checked, 15);
  ck_assert_msg(rep.problems.empty(), "%s tracker: %s", tracker_name(kind),
                rep.problems.empty() ? "" : rep.problems[0].c_str());
}

START_TEST(ring_is_exact) { check_exact(TrackerKind::kRing); }
END_TEST

START_TEST(bitmap_is_exact) { check_exact(TrackerKind::kBitmap); }
END_TEST

START_TEST(hot_is_exact) { check_exact(TrackerKind::kHot); }
END_TEST

// A page written at every step becomes hot (writable, no more faults) and
// is reported at every checkpoint harvest, never by a running one; the
// pages written every fifth step never do. Under the other trackers the
// same guest is reported exactly too.
START_TEST(hot_pages_are_reported_at_every_checkpoint) {
  for (TrackerKind kind : {TrackerKind::kHot, TrackerKind::kRing, TrackerKind::kBitmap}) {
    for (bool running : {false, true}) {
      StepReport rep = run_steps(kind, true, running);
      ck_assert_int_eq(rep.steps_checked, 15);
      ck_assert_msg(rep.problems.empty(), "%s tracker%s: %s", tracker_name(kind), running ? " (running harvests)" : "",
                    rep.problems.empty() ? "" : rep.problems[0].c_str());
    }
  }
}
END_TEST

START_TEST(none_reports_only_vmm_writes) {
  StepReport rep = run_steps(TrackerKind::kNone);
  // Without a KVM log only the VMM's page is known: every step misses guest pages.
  ck_assert_int_eq(rep.steps_checked, 15);
  ck_assert_int_eq(static_cast<int>(rep.problems.size()), 15);
  ck_assert_msg(rep.problems[0].find("extra:;") != std::string::npos, "none tracker invented pages: %s",
                rep.problems[0].c_str());
}
END_TEST

START_TEST(ring_harvest_from_another_thread) {
  // A harvester thread drains the ring while the vCPU runs a page-writing
  // workload; the union of its harvests covers every page the guest wrote.
  std::string prog = vmha_test::workload("page_writer");
  ElfImage img;
  ck_assert(read_elf_file(prog, &img).ok());
  VmOptions o;
  o.memory_bytes = 256 << 20;
  std::unique_ptr<Vm> vm;
  Status s = Vm::create(o, &vm);
  ck_assert_msg(s.ok(), "%s", s.message().c_str());
  ck_assert(vm->load(img, prog, {prog, "512", "40"}, {}).ok());
  // Harvests must overlap the run whatever the host's speed: at the first
  // three round markers (getppid) the vCPU waits, inside run(), until the
  // harvester has drained the ring once more.
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  uint64_t harvested = 0, harvests = 0;
  int markers = 0;
  vm->set_syscall_hook([&](Vm&, uint64_t nr, uint64_t) {
    if (nr == SYS_getppid && ++markers <= 3) {
      std::unique_lock<std::mutex> lock(m);
      uint64_t seen = harvests;
      cv.wait(lock, [&] { return harvests > seen + 1; });  // one harvest wholly after the marker
    }
    return HookAction::kContinue;
  });
  std::thread harvester([&] {
    std::vector<uint64_t> pages;
    std::unique_lock<std::mutex> lock(m);
    while (!done) {
      lock.unlock();
      bool ok = vm->tracker().harvest(pages).ok();
      lock.lock();
      if (ok) harvested += pages.size(), ++harvests;
      cv.notify_all();
      cv.wait_for(lock, std::chrono::milliseconds(1));
    }
  });
  RunResult r = vm->run();
  {
    std::lock_guard<std::mutex> lock(m);
    done = true;
    cv.notify_all();
  }
  harvester.join();
  ck_assert_int_eq(static_cast<int>(r.end), static_cast<int>(RunResult::End::kExited));
  ck_assert_msg(harvests > 2, "harvester ran %llu times", (unsigned long long)harvests);
  ck_assert_msg(harvested >= 512, "harvested only %llu pages", (unsigned long long)harvested);
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_dirty");
  TCase* tc = tcase_create("exact");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, ring_is_exact);
  tcase_add_test(tc, bitmap_is_exact);
  tcase_add_test(tc, hot_is_exact);
  tcase_add_test(tc, hot_pages_are_reported_at_every_checkpoint);
  tcase_add_test(tc, none_reports_only_vmm_writes);
  tcase_add_test(tc, ring_harvest_from_another_thread);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
