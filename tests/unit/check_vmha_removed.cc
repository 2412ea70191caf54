// What a takeover deletes of the removed files the primary held
// (sys/removed_files.h), without a VM: only the held files of its own
// checkpoint. The tasks of one step share the working directory and its
// holding directory; another task's backup may still need what it holds.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/sys/confinement.h"
#include "vmha/sys/removed_files.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

START_TEST(a_takeover_deletes_only_its_own_held_files) {
  const std::string root = vmha_test::make_temp_dir();
  // a run without an id (tasks of one step sharing .vmha/removed)
  const std::string dir = root + "/" + holding_dir("");
  ck_assert_int_eq(mkdir((root + "/" + kStateDir).c_str(), 0700), 0);
  ck_assert_int_eq(mkdir(dir.c_str(), 0700), 0);
  for (ino_t ino : {101, 202, 303}) std::ofstream(root + "/" + held_path("", ino)) << "held " << ino << "\n";
  int root_fd = open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(root_fd, 0);
  struct stat st;
  ck_assert_int_eq(fstat(root_fd, &st), 0);
  const dev_t here = st.st_dev, elsewhere = st.st_dev + 1;

  // task A's checkpoint has 101 and 303 open, and inode 202 of another file
  // system (a system file); 202 here is task B's
  delete_held_inodes(root_fd, "", {{here, 101}, {here, 303}, {elsewhere, 202}});
  ck_assert(!exists(root + "/" + held_path("", 101)));
  ck_assert(!exists(root + "/" + held_path("", 303)));
  ck_assert_msg(exists(root + "/" + held_path("", 202)), "another task's held file was deleted");
  ck_assert(exists(dir));

  // task B takes over too: the holding directory goes with its last file
  delete_held_inodes(root_fd, "", {{here, 202}});
  ck_assert_msg(!exists(dir), "the empty holding directory was left");
  ck_assert_msg(!exists(root + "/" + kStateDir), "the empty .vmha was left");

  // a checkpoint that held nothing, no holding directory: nothing happens
  delete_held_inodes(root_fd, "", {});
  delete_held_inodes(root_fd, "", {{here, 404}});
  ck_assert(exists(root));
  close(root_fd);
  rmdir(root.c_str());
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_removed");
  TCase* tc = tcase_create("core");
  tcase_add_test(tc, a_takeover_deletes_only_its_own_held_files);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
