// The undo journal of file-system changes (vmha/output/undo_log.h) and the
// steps the system calls journal (vmha/sys/change_undo.h): changes of later
// epochs are undone newest first at a takeover, earlier ones stay; each
// step is conditional (a change journaled but never made undoes nothing);
// a cut entry is ignored; paths in a journal someone edited stay beneath the
// working directory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/output/undo_log.h"
#include "vmha/sys/change_undo.h"
#include "vmha/sys/confinement.h"
#include "vmha/sys/removed_files.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A working directory with a run's private directories and a journal.
struct Run {
  std::string dir = vmha_test::outside_tmp_dir();
  Confinement root;
  UndoLog log;
  Run() {
    ck_assert(root.open_root(dir, {}, "0123456789abcdef").ok());
    ck_assert(log.open(root.root_fd(), run_state_dir(root.run_id())).ok());
  }
  int parent(const std::string& rel, std::string* base) { return root.open_parent(root.root_fd(), rel, base); }
  size_t undo_after(uint64_t checkpoint) {
    size_t n = 0;
    Status s = undo_changes_after(root.root_fd(), run_state_dir(root.run_id()), checkpoint, &n);
    ck_assert_msg(s.ok(), "%s", s.message().c_str());
    return n;
  }
};

}  // namespace

START_TEST(changes_after_the_checkpoint_are_undone_newest_first) {
  Run r;
  write_file(r.dir + "/kept", "kept\n");
  write_file(r.dir + "/journal", "old journal\n");
  write_file(r.dir + "/data", "0123456789");
  std::string base;

  // epoch 2: a file made (stays: the takeover resumes checkpoint 2)
  r.log.set_epoch(2);
  int p = r.parent("early", &base);
  r.log.record(undo_create(r.root, p, base));
  write_file(r.dir + "/early", "early\n");
  close(p);

  // epoch 3: a directory and a file in it made, a file removed (held as
  // RemovedFiles does), a rename over another file, a truncation, a chmod
  r.log.set_epoch(3);
  p = r.parent("dir", &base);
  r.log.record(undo_create(r.root, p, base));
  ck_assert_int_eq(mkdirat(p, base.c_str(), 0755), 0);
  close(p);
  p = r.parent("dir/tmp_obj_X1", &base);
  r.log.record(undo_create(r.root, p, base));
  write_file(r.dir + "/dir/tmp_obj_X1", "");
  close(p);
  p = r.parent("journal", &base);
  r.log.record(undo_remove(r.root, p, base));
  struct stat st;
  ck_assert_int_eq(stat((r.dir + "/journal").c_str(), &st), 0);
  ck_assert_int_eq(mkdir((r.dir + "/" + holding_dir(r.root.run_id())).c_str(), 0700), 0);
  ck_assert_int_eq(link((r.dir + "/journal").c_str(), (r.dir + "/" + held_path(r.root.run_id(), st.st_ino)).c_str()), 0);
  ck_assert_int_eq(unlinkat(p, base.c_str(), 0), 0);
  close(p);
  write_file(r.dir + "/new", "new\n");
  std::string to_base;
  p = r.parent("new", &base);
  int q = r.parent("kept", &to_base);
  r.log.record(undo_rename(r.root, p, base, q, to_base, 0));
  ck_assert_int_eq(stat((r.dir + "/kept").c_str(), &st), 0);
  ck_assert_int_eq(link((r.dir + "/kept").c_str(), (r.dir + "/" + held_path(r.root.run_id(), st.st_ino)).c_str()), 0);
  ck_assert_int_eq(renameat(p, base.c_str(), q, to_base.c_str()), 0);
  close(p);
  close(q);
  int fd = open((r.dir + "/data").c_str(), O_RDWR);
  r.log.record(undo_truncate(r.log, r.root, fd, 4));
  ck_assert_int_eq(ftruncate(fd, 4), 0);
  r.log.record(undo_attributes(r.root, fd, ""));
  ck_assert_int_eq(fchmod(fd, 0600), 0);
  close(fd);

  // a takeover from checkpoint 2
  ck_assert_int_eq(r.undo_after(2), 6);
  ck_assert(exists(r.dir + "/early"));
  ck_assert_msg(!exists(r.dir + "/dir"), "the directory made after the checkpoint is still there");
  ck_assert_str_eq(slurp(r.dir + "/journal").c_str(), "old journal\n");
  ck_assert_str_eq(slurp(r.dir + "/kept").c_str(), "kept\n");
  ck_assert_str_eq(slurp(r.dir + "/new").c_str(), "new\n");
  ck_assert_str_eq(slurp(r.dir + "/data").c_str(), "0123456789");
  ck_assert_int_eq(stat((r.dir + "/data").c_str(), &st), 0);
  ck_assert_int_eq(st.st_mode & 0777, 0644);
  // and once more: nothing left to change
  r.undo_after(2);
  ck_assert_str_eq(slurp(r.dir + "/journal").c_str(), "old journal\n");
}
END_TEST

START_TEST(acknowledged_epochs_leave_the_journal) {
  Run r;
  std::string base;
  r.log.set_epoch(2);
  int p = r.parent("a", &base);
  r.log.record(undo_create(r.root, p, base));
  write_file(r.dir + "/a", "a\n");
  close(p);
  r.log.set_epoch(3);
  p = r.parent("b", &base);
  r.log.record(undo_create(r.root, p, base));
  write_file(r.dir + "/b", "b\n");
  close(p);
  r.log.acknowledged(2);  // a's epoch is covered by an acknowledged checkpoint
  ck_assert_int_eq(r.undo_after(1), 1);
  ck_assert(exists(r.dir + "/a"));
  ck_assert(!exists(r.dir + "/b"));
}
END_TEST

START_TEST(a_change_journaled_but_never_made_undoes_nothing) {
  Run r;
  write_file(r.dir + "/there", "there\n");
  std::string base;
  r.log.set_epoch(5);
  int p = r.parent("made", &base);
  r.log.record(undo_create(r.root, p, base));  // the primary died before creating it
  close(p);
  p = r.parent("there", &base);
  r.log.record(undo_create(r.root, p, base));  // it existed: nothing to journal
  close(p);
  ck_assert_int_eq(r.undo_after(4), 1);
  ck_assert(!exists(r.dir + "/made"));
  ck_assert(exists(r.dir + "/there"));
}
END_TEST

START_TEST(a_cut_or_hostile_journal_stays_beneath_the_workdir) {
  Run r;
  const std::string outside = vmha_test::outside_tmp_dir();
  write_file(outside + "/victim", "victim\n");
  const std::string journal = r.dir + "/" + run_state_dir(r.root.run_id()) + "/undo";
  // entries naming paths outside (absolute, ..) and a cut last entry
  UndoLog evil;
  ck_assert(evil.open(r.root.root_fd(), run_state_dir(r.root.run_id())).ok());
  evil.set_epoch(9);
  evil.record([&] {
    UndoStep a, b, c;
    a.kind = b.kind = c.kind = UndoStep::Kind::kRemove;
    a.a = outside + "/victim";
    b.a = "../" + outside.substr(outside.rfind('/') + 1) + "/victim";
    c.a = ".";
    return std::vector<UndoStep>{a, b, c};
  });
  evil.close();
  std::ofstream(journal, std::ios::app) << "\x40\x00\x00\x00partial";
  ck_assert_int_eq(r.undo_after(0), 1);
  ck_assert(exists(outside + "/victim"));
  ck_assert(exists(r.dir));
  write_file(journal, "not a journal");
  size_t n = 0;
  ck_assert(!undo_changes_after(r.root.root_fd(), run_state_dir(r.root.run_id()), 0, &n).ok());
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_undo");
  TCase* tc = tcase_create("core");
  tcase_add_test(tc, changes_after_the_checkpoint_are_undone_newest_first);
  tcase_add_test(tc, acknowledged_epochs_leave_the_journal);
  tcase_add_test(tc, a_change_journaled_but_never_made_undoes_nothing);
  tcase_add_test(tc, a_cut_or_hostile_journal_stays_beneath_the_workdir);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
