// Where duet train's workers come from (tools/duet/train_workers.h): a Slurm
// step's environment (not a batch script's), Slurm host lists, the store's
// port, the variable duet sets for the workers it starts, the private
// directory of their store, the secret file of a store across hosts.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "tools/duet/train_workers.h"

// Last: check.h defines a fail() macro that breaks <ios>.
#include <check.h>
#include "tests/unit/run_suite.h"

using namespace duet::cli;

static EnvFn table(const std::map<std::string, std::string>& m) {
  return [m](const char* n) -> const char* {
    auto it = m.find(n);
    return it == m.end() ? nullptr : it->second.c_str();
  };
}

// As srun -N 2 -n 2 sets it for task 1 (seen on the test cluster).
static std::map<std::string, std::string> step_task1() {
  return {{"SLURM_JOB_ID", "41"},           {"SLURM_STEP_ID", "3"},
          {"SLURM_PROCID", "1"},            {"SLURM_NTASKS", "2"},
          {"SLURM_STEP_NUM_TASKS", "2"},    {"SLURM_STEP_NODELIST", "node[1-2]"},
          {"SLURMD_NODENAME", "node2"}};
}

START_TEST(first_host_of_slurm_host_lists) {
  ck_assert_str_eq(first_host("node[1-2]").c_str(), "node1");
  ck_assert_str_eq(first_host("gpu[07-09,12],cpu1").c_str(), "gpu07");
  ck_assert_str_eq(first_host("a1,a2").c_str(), "a1");
  ck_assert_str_eq(first_host("rack2-n[3,5]").c_str(), "rack2-n3");
  ck_assert_str_eq(first_host("solo").c_str(), "solo");
  for (const char* bad : {"", "node[1-2", "node[]"}) {
    try {
      first_host(bad);
      ck_abort_msg("'%s' accepted", bad);
    } catch (const std::runtime_error&) {
    }
  }
}
END_TEST

START_TEST(store_port_is_per_step) {
  ck_assert_int_eq(step_store_port(41, 3), 29500 + (41 * 16 + 3) % 2000);
  ck_assert_int_ne(step_store_port(41, 0), step_store_port(41, 1));
  for (std::uint64_t j : {0ull, 1ull, 123456789ull, ~0ull}) {
    const int p = step_store_port(j, 7);
    ck_assert(p >= 29500 && p < 31500);
  }
}
END_TEST

START_TEST(a_slurm_step_of_two_tasks) {
  auto p = slurm_step_place(table(step_task1()));
  ck_assert(p.has_value());
  ck_assert_int_eq(p->rank, 1);
  ck_assert_int_eq(p->size, 2);
  ck_assert_str_eq(p->store_host.c_str(), "node1");
  ck_assert_int_eq(p->store_port, step_store_port(41, 3));
  ck_assert_str_eq(p->scope.c_str(), "slurm job 41 step 3");
  ck_assert(p->store_path.empty());  // perhaps on several hosts: a TCP store (with the secret)
}
END_TEST

START_TEST(no_step_no_slurm_workers) {
  // a batch script: SLURM_PROCID=0 and SLURM_NTASKS=2, but no step
  auto batch = step_task1();
  batch.erase("SLURM_STEP_NUM_TASKS");
  batch.erase("SLURM_STEP_ID");
  batch["SLURM_PROCID"] = "0";
  ck_assert(!slurm_step_place(table(batch)).has_value());
  // a step of one task
  auto one = step_task1();
  one["SLURM_STEP_NUM_TASKS"] = "1";
  one["SLURM_PROCID"] = "0";
  ck_assert(!slurm_step_place(table(one)).has_value());
  ck_assert(!slurm_step_place(table({})).has_value());
  // a step whose variables do not read
  auto bad = step_task1();
  bad["SLURM_JOB_ID"] = "4x";
  try {
    slurm_step_place(table(bad));
    ck_abort_msg("SLURM_JOB_ID=4x accepted");
  } catch (const std::runtime_error& e) {
    ck_assert(std::string(e.what()).find("SLURM_JOB_ID") != std::string::npos);
  }
}
END_TEST

START_TEST(spawned_worker_variable) {
  auto p = spawned_place(table({{"DUET_TRAIN_WORKER", "2/3@/tmp/duet-train.AbC123/store"}}));
  ck_assert(p.has_value());
  ck_assert_int_eq(p->rank, 2);
  ck_assert_int_eq(p->size, 3);
  ck_assert_str_eq(p->store_path.c_str(), "/tmp/duet-train.AbC123/store");
  ck_assert(!spawned_place(table({})).has_value());
  // the network form of before issue 52 is no longer taken
  for (const char* bad : {"2/3", "2/3@127.0.0.1:40123", "2/3@", "2/3@rel/store", "x/3@/a"}) {
    try {
      spawned_place(table({{"DUET_TRAIN_WORKER", bad}}));
      ck_abort_msg("'%s' accepted", bad);
    } catch (const std::runtime_error&) {
    }
  }
}
END_TEST

// duet train --workers: the store's directory is this user's, mode 0700,
// and goes with what is in it.
START_TEST(private_store_directory) {
  std::string dir;
  {
    PrivateStoreDir d;
    dir = d.dir();
    struct stat st {};
    ck_assert(lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
    ck_assert_uint_eq(st.st_uid, geteuid());
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
    ck_assert(d.store_path() == dir + "/store");
    std::ofstream(d.store_path()) << "x";
  }
  struct stat st {};
  ck_assert(lstat(dir.c_str(), &st) != 0);
}
END_TEST

// The secret of a store across hosts: a file of this user's that no one
// else may read or change (mode 0600/0400), 16 to 4096 bytes.
START_TEST(store_secret_file) {
  char tmpl[] = "/tmp/check_train_workers.XXXXXX";
  ck_assert(mkdtemp(tmpl));
  const std::string dir = tmpl, path = dir + "/train-secret";
  auto write = [&](const std::string& text, mode_t mode) {
    unlink(path.c_str());
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
  };
  auto refused = [&](const std::string& what) {
    try {
      read_store_secret(path);
    } catch (const std::runtime_error& e) {
      ck_assert_msg(std::string(e.what()).find(what) != std::string::npos, "%s", e.what());
      ck_assert_msg(std::string(e.what()).find("head -c 32 /dev/urandom") != std::string::npos, "%s", e.what());
      return;
    }
    ck_abort_msg("secret file accepted (expected: %s)", what.c_str());
  };
  refused("No such file");
  write("0123456789abcdefXYZ\n", 0600);
  ck_assert(read_store_secret(path) == "0123456789abcdefXYZ");
  write("0123456789abcdefXYZ", 0400);
  ck_assert(read_store_secret(path) == "0123456789abcdefXYZ");
  write("0123456789abcdefXYZ", 0644);
  refused("others may read or change it (mode 0644");
  write("0123456789abcdefXYZ", 0620);
  refused("mode 0620");
  write("short\n", 0600);
  refused("only 5 bytes");
  write(std::string(5000, 'k'), 0600);
  refused("more than 4096 bytes");
  if (geteuid() == 0) {  // another user's file, even closed to others
    write("0123456789abcdefXYZ", 0600);
    ck_assert(chown(path.c_str(), 65534, 65534) == 0);
    refused("owned by uid 65534, not by you");
  }
  unlink(path.c_str());
  mkdir(path.c_str(), 0700);
  refused("not a regular file");
  rmdir(path.c_str());
  rmdir(dir.c_str());
  ck_assert(default_store_secret_path(table({{"HOME", "/home/u"}})) == "/home/u/.duet/train-secret");
}
END_TEST

START_TEST(node_address_of_a_resolving_name) {
  ck_assert_str_eq(node_address("localhost").c_str(), "localhost");
}
END_TEST

int main() {
  Suite* s = suite_create("train_workers");
  TCase* tc = tcase_create("core");
  tcase_add_test(tc, first_host_of_slurm_host_lists);
  tcase_add_test(tc, store_port_is_per_step);
  tcase_add_test(tc, a_slurm_step_of_two_tasks);
  tcase_add_test(tc, no_step_no_slurm_workers);
  tcase_add_test(tc, spawned_worker_variable);
  tcase_add_test(tc, private_store_directory);
  tcase_add_test(tc, store_secret_file);
  tcase_add_test(tc, node_address_of_a_resolving_name);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
