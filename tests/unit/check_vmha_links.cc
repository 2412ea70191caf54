// Symlinks that leave their root (sys/confinement_links.cc), without a VM:
// each is expanded through the policy and its target located afresh, so a
// link into the policy is followed with the target's rules and one out of
// it is refused, however it is spelled (absolute, `..`, a chain, a loop).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/vmha/vmha_test_util.h"
#include "vmha/sys/confinement.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

// outer/job: the working directory; outer/real/ro and outer/real/other:
// read-only, the first named through the symlink outer/ro -> real/ro;
// outer/secret: outside the policy.
std::string g_outer;

// Compares as std::string: ck_assert_str_eq would keep a pointer into a temporary.
void same(const std::string& got, const std::string& want) { ck_assert_str_eq(got.c_str(), want.c_str()); }
void put(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
void link_to(const std::string& target, const std::string& at) {
  ck_assert_int_eq(symlink(target.c_str(), at.c_str()), 0);
}

void setup() {
  g_outer = vmha_test::make_temp_dir();
  for (const char* d : {"/job", "/job/sub", "/real", "/real/ro", "/real/ro/dir", "/real/other"})
    ck_assert_int_eq(mkdir((g_outer + d).c_str(), 0755), 0);
  put(g_outer + "/real/ro/data.txt", "read-only data\n");
  put(g_outer + "/real/other/data.txt", "other data\n");
  put(g_outer + "/job/mine.txt", "mine\n");
  put(g_outer + "/secret", "secret\n");
  link_to("real/ro", g_outer + "/ro");
  std::string ro = g_outer + "/ro";
  link_to(ro + "/data.txt", ro + "/abs_in");                     // absolute, inside its own root
  link_to(g_outer + "/real/other/data.txt", ro + "/abs_other");  // into another root
  link_to(g_outer + "/secret", ro + "/abs_out");
  link_to(ro + "/abs_in", ro + "/chain");  // a link to a link
  link_to(ro + "/loop_b", ro + "/loop_a");
  link_to(ro + "/loop_a", ro + "/loop_b");
  link_to(ro + "/missing_dir", ro + "/to_missing");
  link_to(ro + "/dir", ro + "/abs_dir");
  link_to("../ro/data.txt", g_outer + "/job/up_ro");  // `..` above the working directory, into the policy
  link_to("../secret", g_outer + "/job/up_out");
  link_to(ro + "/data.txt", g_outer + "/job/sub/abs_ro");
}
void teardown() { std::system(("rm -rf " + g_outer).c_str()); }

struct Policy {
  Confinement c;
  Policy() {
    Status s = c.open_root(g_outer + "/job", {g_outer + "/ro", g_outer + "/real/other"});
    ck_assert_msg(s.ok(), "%s", s.message().c_str());
  }
};

START_TEST(links_into_the_policy_are_followed) {
  Policy p;
  std::string ro = g_outer + "/ro";
  Located l;
  ck_assert_int_eq(p.c.locate_following(ro + "/abs_in", true, &l), 0);
  ck_assert(l.read_only);
  same(l.recorded, ro + "/data.txt");
  ck_assert_int_eq(p.c.locate_following(ro + "/chain", true, &l), 0);
  same(l.recorded, ro + "/data.txt");
  ck_assert_int_eq(p.c.locate_following(ro + "/abs_other", true, &l), 0);
  same(l.recorded, g_outer + "/real/other/data.txt");
  // Through a linked directory on the way.
  put(g_outer + "/real/ro/dir/f", "f\n");
  ck_assert_int_eq(p.c.locate_following(ro + "/abs_dir/f", true, &l), 0);
  same(l.recorded, ro + "/dir/f");
  // From the working directory into a read-only path: read-only there.
  ck_assert_int_eq(p.c.locate_following(g_outer + "/job/up_ro", true, &l), 0);
  ck_assert(l.read_only);
  ck_assert_int_eq(p.c.locate_following(g_outer + "/job/sub/abs_ro", true, &l), 0);
  ck_assert(l.read_only);
  same(l.recorded, ro + "/data.txt");
  // `..` of a root that is itself a symlink (ro -> real/ro) is its target's parent, as the kernel has it.
  ck_assert_int_eq(p.c.locate_following(ro + "/../other/data.txt", true, &l), 0);
  same(l.recorded, g_outer + "/real/other/data.txt");
  // The working directory's own files stay working-directory files.
  ck_assert_int_eq(p.c.locate_following(g_outer + "/job/sub/../mine.txt", true, &l), 0);
  ck_assert(!l.read_only);
  same(l.recorded, "mine.txt");
}
END_TEST

START_TEST(links_out_of_the_policy_are_refused) {
  Policy p;
  std::string ro = g_outer + "/ro";
  Located l;
  ck_assert_int_eq(p.c.locate_following(ro + "/abs_out", true, &l), -EACCES);
  ck_assert_int_eq(p.c.locate_following(g_outer + "/job/up_out", true, &l), -EACCES);
  ck_assert_int_eq(p.c.locate_following(ro + "/../../secret", true, &l), -EACCES);
  ck_assert_int_eq(p.c.locate_following(ro + "/loop_a", true, &l), -ELOOP);
  ck_assert_int_eq(p.c.locate_following(ro + "/to_missing/x", true, &l), -ENOENT);
  // Not followed in the last component (lstat, unlink, readlink): the link itself.
  ck_assert_int_eq(p.c.locate_following(ro + "/abs_out", false, &l), 0);
  same(l.recorded, ro + "/abs_out");
  // A name to create behind a link: its directory is resolved.
  ck_assert_int_eq(p.c.locate_following(ro + "/abs_dir/new", true, &l), 0);
  same(l.recorded, ro + "/dir/new");
}
END_TEST

START_TEST(open_for_reading_follows_through_the_policy) {
  Policy p;
  std::string ro = g_outer + "/ro";
  ck_assert(p.c.leaves_root(p.c.root_fd(), "sub/abs_ro", true));
  ck_assert(!p.c.leaves_root(p.c.root_fd(), "sub/abs_ro", false));
  ck_assert(!p.c.leaves_root(p.c.root_fd(), "mine.txt", true));
  int fd = p.c.open_for_reading(ro + "/chain");
  ck_assert_int_ge(fd, 0);
  char buf[64] = {};
  ck_assert_int_gt(read(fd, buf, sizeof buf - 1), 0);
  close(fd);
  ck_assert_str_eq(buf, "read-only data\n");
  fd = p.c.open_for_reading("sub/abs_ro");  // relative: beneath the working directory
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(p.c.open_for_reading(ro + "/abs_out"), -EACCES);
  ck_assert_int_eq(p.c.open_for_reading(g_outer + "/secret"), -EACCES);
}
END_TEST

}  // namespace

int main() {
  Suite* s = suite_create("vmha_links");
  TCase* tc = tcase_create("links");
  tcase_set_timeout(tc, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, links_into_the_policy_are_followed);
  tcase_add_test(tc, links_out_of_the_policy_are_refused);
  tcase_add_test(tc, open_for_reading_follows_through_the_policy);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
