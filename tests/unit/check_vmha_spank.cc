// vmha SPANK plugin, Slurm-free part: --ha values, plugstack.conf arguments,
// the settings' trip through the task environment, host lists, the choice
// of the backup node, task results and the job's AdminComment text, and
// the batch step's pieces (its srun check, its directory, its script's copy).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "plugins/spank/lib/batch_step.h"
#include "plugins/spank/lib/ha_accounting.h"
#include "plugins/spank/lib/ha_settings.h"
#include "plugins/spank/lib/hostlist.h"
#include "plugins/spank/lib/state_dir.h"
#include "plugins/spank/task/batch_script.h"
#include "plugins/spank/task/fence.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"
#include "tests/unit/skip.h"

using namespace vmha_spank;

// A sparse file of `size` bytes (nothing written).
static int truncate_new(const std::string& path, off_t size) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return -1;
  int rc = ftruncate(fd, size);
  close(fd);
  return rc;
}

START_TEST(test_ha_values) {
  bool on = false;
  int epoch = -1;
  std::string err;
  ck_assert(parse_ha_value(nullptr, HaSource::kOption, &on, &epoch, &err) && on && epoch == 0);
  ck_assert(parse_ha_value("", HaSource::kOption, &on, &epoch, &err) && on && epoch == 0);
  ck_assert(parse_ha_value("yes", HaSource::kOption, &on, &epoch, &err) && on && epoch == 0);
  ck_assert(parse_ha_value("20", HaSource::kOption, &on, &epoch, &err) && on && epoch == 20);
  ck_assert(parse_ha_value("60000", HaSource::kOption, &on, &epoch, &err) && on && epoch == 60000);
  // Off only from the environment (SLURM_HA=no); --ha=0 reads as "protect".
  ck_assert(parse_ha_value("off", HaSource::kEnvironment, &on, &epoch, &err) && !on);
  ck_assert(parse_ha_value("0", HaSource::kEnvironment, &on, &epoch, &err) && !on);
  for (const char* off : {"0", "no", "off", "false"}) {
    err.clear();
    ck_assert_msg(!parse_ha_value(off, HaSource::kOption, &on, &epoch, &err), "--ha=%s accepted", off);
    ck_assert_msg(err.find("leave out --ha") != std::string::npos, "%s", err.c_str());
  }
  for (const char* bad : {"abc", "-5", "60001", "10ms", "1.5", " 20"}) {
    err.clear();
    ck_assert_msg(!parse_ha_value(bad, HaSource::kEnvironment, &on, &epoch, &err), "accepted '%s'", bad);
    ck_assert_msg(err.find("expected an epoch length in milliseconds") != std::string::npos, "%s", err.c_str());
    ck_assert_msg(err.find(std::string("'") + bad + "'") != std::string::npos, "%s", err.c_str());
  }
}
END_TEST

START_TEST(test_plugstack_args) {
  HaSettings s;
  ck_assert_int_eq(s.epoch_ms, 50);
  ck_assert_str_eq(s.mode.c_str(), "async");
  ck_assert_str_eq(s.backup.c_str(), "next");
  ck_assert(s.vmha.size() > 5 && s.vmha.substr(s.vmha.size() - 5) == "/vmha");
  const char* args[] = {
      "epoch=20",       "mode=stop-copy",           "lease=300",          "memory=256",
      "backup=last",    "statedir=/var/spool/vmha", "vmha=/opt/bin/vmha", "task=/opt/libexec/vmha-task",
      "transports=tcp", "srun_args=--mem=0"};
  std::string err;
  ck_assert_msg(apply_plugstack_args(10, const_cast<char**>(args), &s, &err), "%s", err.c_str());
  ck_assert_int_eq(s.epoch_ms, 20);
  ck_assert_str_eq(s.mode.c_str(), "stop-copy");
  ck_assert_int_eq(s.lease_ms, 300);
  ck_assert_int_eq(s.memory_mib, 256);
  ck_assert_str_eq(s.backup.c_str(), "last");
  ck_assert_str_eq(s.statedir.c_str(), "/var/spool/vmha");
  ck_assert_str_eq(s.task.c_str(), "/opt/libexec/vmha-task");
  ck_assert_str_eq(s.transports.c_str(), "tcp");
  const char* bad[] = {"epoch=50", "mode=fast"};
  ck_assert(!apply_plugstack_args(2, const_cast<char**>(bad), &s, &err));
  ck_assert_msg(err == "argument 2 'mode=fast': mode: expected async or stop-copy, got 'fast'", "%s", err.c_str());
  ck_assert_str_eq(s.on_loss.c_str(), "stop");  // the safe default (vmha(1) Split brain)
  ck_assert(apply_plugstack_arg("on_loss=continue", &s, &err));
  ck_assert_str_eq(s.on_loss.c_str(), "continue");
  ck_assert(!apply_plugstack_arg("on_loss=maybe", &s, &err));
  ck_assert_msg(err == "on_loss: expected stop or continue, got 'maybe'", "%s", err.c_str());
  ck_assert(!apply_plugstack_arg("epochs=5", &s, &err));
  ck_assert(err.find("unknown key 'epochs'") != std::string::npos);
  ck_assert(!apply_plugstack_arg("epoch", &s, &err));
  ck_assert(err.find("expected key=value") != std::string::npos);
  ck_assert(!apply_plugstack_arg("statedir=relative/dir", &s, &err));
  ck_assert(!apply_plugstack_arg("lease=10", &s, &err));
  ck_assert(!apply_plugstack_arg("backup=random", &s, &err));
}
END_TEST

// ro=: the read-only paths of the guest's policy, in place of vmha's
// defaults, given to both vmha run and vmha backup.
START_TEST(test_plugstack_read_only_paths) {
  HaSettings s;
  ck_assert_str_eq(s.ro.c_str(), vmha::kDefaultReadOnlyPaths);
  std::vector<std::string> opts = read_only_options(s);
  ck_assert_str_eq(opts[0].c_str(), "--no-default-ro");
  const std::string defaults = vmha::kDefaultReadOnlyPaths;
  ck_assert_int_eq(opts.size(), 1 + 2 * (1 + std::count(defaults.begin(), defaults.end(), ':')));
  ck_assert_str_eq(opts[1].c_str(), "--ro");
  ck_assert_str_eq(opts[2].c_str(), "/usr");
  std::string err;
  ck_assert_msg(apply_plugstack_arg("ro=/usr:/opt/conda::/etc/passwd", &s, &err), "%s", err.c_str());
  opts = read_only_options(s);
  std::vector<std::string> want = {"--no-default-ro", "--ro", "/usr", "--ro", "/opt/conda", "--ro", "/etc/passwd"};
  ck_assert(opts == want);
  ck_assert(apply_plugstack_arg("ro=", &s, &err));
  ck_assert(read_only_options(s) == std::vector<std::string>{"--no-default-ro"});
  for (const char* bad : {"ro=usr", "ro=/usr:lib", "ro=/usr/../etc", "ro=/usr/./lib", "ro=/.."}) {
    ck_assert_msg(!apply_plugstack_arg(bad, &s, &err), "%s accepted", bad);
    ck_assert_msg(err.find("ro: expected absolute paths separated by ':'") != std::string::npos, "%s", err.c_str());
  }
  ck_assert(s.ro.empty());  // a refused value leaves the setting as it was
}
END_TEST

START_TEST(test_task_environment_round_trip) {
  HaSettings a;
  a.epoch_ms = 7;
  a.mode = "stop-copy";
  a.statedir = "/x/y";
  a.transports = "sm,self";
  a.ro = "/usr:/opt/x";
  std::map<std::string, std::string> env;
  for (const auto& [k, v] : task_environment(a)) {
    ck_assert(k.rfind(kEnvPrefix, 0) == 0);
    env[k] = v;
  }
  HaSettings b;
  std::string err;
  auto get = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  ck_assert_msg(settings_from_environment(get, &b, &err), "%s", err.c_str());
  ck_assert_int_eq(b.epoch_ms, 7);
  ck_assert_str_eq(b.mode.c_str(), "stop-copy");
  ck_assert_str_eq(b.statedir.c_str(), "/x/y");
  ck_assert_str_eq(b.transports.c_str(), "sm,self");
  ck_assert_str_eq(b.ro.c_str(), "/usr:/opt/x");
  env.erase("VMHA_TASK_MODE");
  ck_assert(!settings_from_environment(get, &b, &err));
  ck_assert(err.find("VMHA_TASK_MODE is not set") != std::string::npos);
  env["VMHA_TASK_MODE"] = "bogus";
  ck_assert(!settings_from_environment(get, &b, &err));
  ck_assert(err.find("VMHA_TASK_MODE: expected async or stop-copy") != std::string::npos);
}
END_TEST

static std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

START_TEST(test_hostlist) {
  std::vector<std::string> h;
  std::string err;
  ck_assert(expand_hostlist("node1", &h, &err));
  ck_assert_msg(joined(h) == "node1", "%s", joined(h).c_str());
  ck_assert(expand_hostlist("node[1-3,7],login", &h, &err));
  ck_assert_msg(joined(h) == "node1 node2 node3 node7 login", "%s", joined(h).c_str());
  ck_assert(expand_hostlist("gpu[08-10]x", &h, &err));
  ck_assert_msg(joined(h) == "gpu08x gpu09x gpu10x", "%s", joined(h).c_str());
  ck_assert(expand_hostlist("r[1-2]n[1-2]", &h, &err));
  ck_assert_msg(joined(h) == "r1n1 r1n2 r2n1 r2n2", "%s", joined(h).c_str());
  ck_assert(!expand_hostlist("node[1-", &h, &err));
  ck_assert_msg(err == "column 5: '[' without ']'", "%s", err.c_str());
  ck_assert(!expand_hostlist("node[3-1]", &h, &err));
  ck_assert(err.find("runs backwards") != std::string::npos);
  ck_assert(!expand_hostlist("node[a]", &h, &err));
  ck_assert(err.find("expected a number or a range") != std::string::npos);
  ck_assert(!expand_hostlist("a,,b", &h, &err));
  ck_assert(err.find("empty host name") != std::string::npos);
}
END_TEST

START_TEST(test_backup_node) {
  std::vector<std::string> n = {"node1", "node2", "node3"};
  ck_assert_msg(pick_backup_node(n, "node1", "next") == "node2", "backup node");
  ck_assert_msg(pick_backup_node(n, "node3", "next") == "node1", "backup node");
  ck_assert_msg(pick_backup_node(n, "node3", "last") == "node2", "backup node");
  ck_assert_msg(pick_backup_node(n, "node1", "last") == "node3", "backup node");
  ck_assert_msg(pick_backup_node(n, "elsewhere", "next") == "node1", "backup node");
  ck_assert_msg(pick_backup_node({"node1"}, "node1", "next") == "", "backup node");
  ck_assert_msg(pick_backup_node({"node1"}, "node1", "last") == "", "backup node");
}
END_TEST

START_TEST(test_results_and_comment) {
  TaskResult a;
  a.epochs = 100;
  a.pause_ms_mean = 0.5;
  a.pause_count = 100;
  a.node = "node1";
  a.backup_node = "node2";
  TaskResult back;
  std::string err;
  ck_assert_msg(parse_result(format_result(a), &back, &err), "%s", err.c_str());
  ck_assert_int_eq(back.epochs, 100);
  ck_assert_int_eq(back.pause_count, 100);
  ck_assert_str_eq(back.backup_node.c_str(), "node2");
  ck_assert(!parse_result("epochs=1\ngarbage\n", &back, &err));
  ck_assert_msg(err == "line 2: expected key=value, got 'garbage'", "%s", err.c_str());
  ck_assert(!parse_result("epochs=-3\n", &back, &err));
  ck_assert_msg(err.find("line 1: epochs: expected an integer 0..") != std::string::npos, "%s", err.c_str());
  // What the audit forged in the user-writable file: refused, or escaped.
  for (const char* forged : {"failovers=99\n", "failovers=2\n", "epochs=1e30\n", "epochs= 5\n", "epochs=0x10\n",
                             "epochs=99999999999999999999\n", "pause_ms_mean=nan\n", "pause_ms_mean=1e400\n",
                             "exit=300\n", "node=node1\x1b[2J\n", "backup_node=a b\n",
                             // a second line for a key, a key no version writes, no format line
                             "format=vmha-task-result/1\nfailovers=0\nfailovers=1\n",
                             "format=vmha-task-result/1\nfailovers_total=9\n", "epochs=5\n"}) {
    TaskResult f;
    ck_assert_msg(!parse_result(forged, &f, &err), "accepted: %s", forged);
    ck_assert_msg(err.find('\x1b') == std::string::npos && err.find('\r') == std::string::npos, "%s", err.c_str());
  }
  TaskResult esc;
  ck_assert_msg(parse_result("format=vmha-task-result/1\ntakeover_cause=killed\x1b]0;title\x07\rvmha backup: forged\n",
                             &esc, &err),
                "%s", err.c_str());
  ck_assert_str_eq(esc.takeover_cause.c_str(), "killed\\x1b]0;title\\x07\\x0dvmha backup: forged");

  char tmpl[] = "/tmp/check_vmha_spank.XXXXXX";
  ck_assert(mkdtemp(tmpl));
  std::string dir = tmpl;
  TaskResult b;
  b.epochs = 40;
  b.failovers = 1;  // finished by its backup: no pause figures
  b.takeover_cause = "killed by signal 9\nforged=line";  // one line in the file, whatever the text
  mkdir((dir + "/step0.task0").c_str(), 0700);
  mkdir((dir + "/step0.task1").c_str(), 0700);
  mkdir((dir + "/step1.task0").c_str(), 0700);
  std::ofstream(dir + "/step0.task0/result") << format_result(a);
  std::ofstream(dir + "/step0.task1/result") << format_result(b);
  std::ofstream(dir + "/step1.task0/result") << "epochs=x\n";
  // What a user may leave in their own tree: a FIFO (would block a reader),
  // a symlink to a root-only file, a huge file. None is followed or read.
  mkdir((dir + "/step2.task0").c_str(), 0700);
  mkdir((dir + "/step2.task1").c_str(), 0700);
  mkdir((dir + "/step2.task2").c_str(), 0700);
  ck_assert_int_eq(mkfifo((dir + "/step2.task0/result").c_str(), 0600), 0);
  ck_assert_int_eq(symlink("/etc/shadow", (dir + "/step2.task1/result").c_str()), 0);
  ck_assert_int_eq(truncate_new(dir + "/step2.task2/result", 1 << 30), 0);
  std::vector<std::string> problems;
  Fd job(open(dir.c_str(), O_RDONLY | O_DIRECTORY));
  JobTotals t = sum_job_results(job.get(), dir, &problems);
  ck_assert_int_eq(problems.size(), 4);
  ck_assert(problems[0].find("step1.task0/result: line 1: epochs") != std::string::npos);
  ck_assert_msg(problems[1].find("step2.task0/result: not a regular file") != std::string::npos, "%s",
                problems[1].c_str());
  ck_assert_msg(problems[2].find("step2.task1/result: a symlink (not followed)") != std::string::npos, "%s",
                problems[2].c_str());
  ck_assert_msg(problems[3].find("step2.task2/result: larger than 65536 bytes") != std::string::npos, "%s",
                problems[3].c_str());
  ck_assert_msg(t.comment() == "vmha: tasks=2 epochs=140 pause_ms_mean=0.500 failovers=1", "%s", t.comment().c_str());
  ck_assert_int_eq(t.takeovers.size(), 1);
  ck_assert_str_eq(t.takeovers[0].c_str(), "step0.task1: killed by signal 9 forged=line");
  ck_assert_msg(JobTotals().comment() == "vmha: tasks=0 epochs=0 pause_ms_mean=0.000 failovers=0", "%s",
                JobTotals().comment().c_str());
  std::string cmd = "rm -rf " + dir;
  ck_assert_int_eq(std::system(cmd.c_str()), 0);
}
END_TEST

namespace {

std::string temp_dir() {
  char tmpl[] = "/tmp/check_vmha_statedir.XXXXXX";
  ck_assert(mkdtemp(tmpl));
  return tmpl;
}

mode_t mode_of(const std::string& p) {
  struct stat st;
  ck_assert_int_eq(lstat(p.c_str(), &st), 0);
  return st.st_mode & 07777;
}

uid_t owner_of(const std::string& p) {
  struct stat st;
  ck_assert_int_eq(lstat(p.c_str(), &st), 0);
  return st.st_uid;
}

}  // namespace

// The state directory is created root-owned 0711; one that others can write
// (an earlier vmha made it 1777) or that is a symlink is refused.
START_TEST(test_state_dir_trusted) {
  SKIP_UNLESS(test_support::is_root(), "ownership checks need root (as in slurmstepd)");
  std::string base = temp_dir();
  std::string err;
  Fd fd = open_state_dir(base + "/state", &err);
  ck_assert_msg(fd, "%s", err.c_str());
  ck_assert_int_eq(mode_of(base + "/state"), 0711);
  ck_assert_int_eq(owner_of(base + "/state"), 0);

  ck_assert_int_eq(mkdir((base + "/open").c_str(), 0777), 0);
  ck_assert_int_eq(chmod((base + "/open").c_str(), 01777), 0);
  ck_assert(!open_state_dir(base + "/open", &err));
  ck_assert_msg(err.find("is writable by group or others (mode 1777)") != std::string::npos, "%s", err.c_str());

  ck_assert_int_eq(chown((base + "/open").c_str(), 65534, 65534), 0);
  ck_assert_int_eq(chmod((base + "/open").c_str(), 0711), 0);
  ck_assert(!open_state_dir(base + "/open", &err));
  ck_assert_msg(err.find("is owned by uid 65534, not root") != std::string::npos, "%s", err.c_str());

  // A user's symlink in a sticky directory pointing at a root directory.
  ck_assert_int_eq(chmod(base.c_str(), 01777), 0);
  ck_assert_int_eq(symlink("/etc", (base + "/link").c_str()), 0);
  ck_assert_int_eq(lchown((base + "/link").c_str(), 65534, 65534), 0);
  ck_assert(!open_state_dir(base + "/link", &err));
  ck_assert_msg(err.find("is a symlink owned by uid 65534, not root") != std::string::npos, "%s", err.c_str());
  ck_assert(!open_state_dir("relative/dir", &err));
  ck_assert_int_eq(std::system(("rm -rf " + base).c_str()), 0);
}
END_TEST

// A planted statedir/job<J> (symlink, file, another user's directory) is
// refused and its target left alone; a fresh one goes to the job's owner.
START_TEST(test_job_dir_planted) {
  SKIP_UNLESS(test_support::is_root(), "needs root (as in slurmstepd)");
  std::string base = temp_dir();
  std::string err;
  Fd state = open_state_dir(base + "/state", &err);
  ck_assert_msg(state, "%s", err.c_str());
  ck_assert_int_eq(mkdir((base + "/victim").c_str(), 0755), 0);
  ck_assert_int_eq(symlink((base + "/victim").c_str(), (base + "/state/job7").c_str()), 0);
  ck_assert(!open_job_dir(state.get(), base + "/state", 7, 65534, 65534, &err));
  ck_assert_msg(err.find("job7 exists and is not a directory (a symlink?)") != std::string::npos, "%s", err.c_str());
  ck_assert_int_eq(owner_of(base + "/victim"), 0);
  ck_assert_int_eq(mode_of(base + "/victim"), 0755);

  ck_assert_int_eq(mkdir((base + "/state/job8").c_str(), 0700), 0);
  ck_assert_int_eq(chown((base + "/state/job8").c_str(), 1234, 1234), 0);
  ck_assert(!open_job_dir(state.get(), base + "/state", 8, 65534, 65534, &err));
  ck_assert_msg(err.find("belongs to uid 1234, not the job's owner uid 65534") != std::string::npos, "%s", err.c_str());

  Fd job = open_job_dir(state.get(), base + "/state", 9, 65534, 65534, &err);
  ck_assert_msg(job, "%s", err.c_str());
  ck_assert_int_eq(owner_of(base + "/state/job9"), 65534);
  ck_assert_int_eq(mode_of(base + "/state/job9"), 0700);
  Fd again = open_job_dir(state.get(), base + "/state", 9, 65534, 65534, &err);  // a later step
  ck_assert_msg(again, "%s", err.c_str());
  ck_assert_int_eq(std::system(("rm -rf " + base).c_str()), 0);
}
END_TEST

// The epilog's removal unlinks symlinks inside the user's tree instead of
// following them, and removes as the owner.
START_TEST(test_job_dir_removal) {
  SKIP_UNLESS(test_support::is_root(), "needs root (as in slurmstepd)");
  std::string base = temp_dir();
  std::string err;
  Fd state = open_state_dir(base + "/state", &err);
  ck_assert_int_eq(mkdir((base + "/victim").c_str(), 0755), 0);
  std::ofstream(base + "/victim/keep") << "keep\n";
  {
    Fd job = open_job_dir(state.get(), base + "/state", 5, 65534, 65534, &err);
    ck_assert_msg(job, "%s", err.c_str());
  }
  std::string j = base + "/state/job5";
  ck_assert_int_eq(mkdir((j + "/step0.task0").c_str(), 0700), 0);
  std::ofstream(j + "/step0.task0/out") << "x\n";
  ck_assert_int_eq(symlink((base + "/victim").c_str(), (j + "/step0.task1").c_str()), 0);
  ck_assert_int_eq(std::system(("chown -R -h 65534:65534 " + j).c_str()), 0);
  ck_assert_int_eq(chmod((j + "/step0.task0").c_str(), 0500), 0);  // the owner made it read-only
  ck_assert_msg(remove_job_dir(state.get(), base + "/state", 5, &err), "%s", err.c_str());
  ck_assert_int_eq(access(j.c_str(), F_OK), -1);
  ck_assert_int_eq(access((base + "/victim/keep").c_str(), F_OK), 0);
  ck_assert_msg(remove_job_dir(state.get(), base + "/state", 5, &err), "%s", err.c_str());  // gone: fine
  // Another user's (root's) file inside is not the owner's to remove.
  { Fd job = open_job_dir(state.get(), base + "/state", 6, 65534, 65534, &err); }
  ck_assert_int_eq(mkdir((base + "/state/job6/sub").c_str(), 0755), 0);  // root-owned
  std::ofstream(base + "/state/job6/sub/root-file") << "r\n";
  ck_assert(!remove_job_dir(state.get(), base + "/state", 6, &err));
  ck_assert_int_eq(access((base + "/state/job6/sub/root-file").c_str(), F_OK), 0);
  ck_assert_int_eq(std::system(("rm -rf " + base).c_str()), 0);
}
END_TEST

// The fencing command reads Slurm's verdict on the primary's node from
// scontrol's own output (22.05's formats).
START_TEST(test_fence_reads_slurm) {
  using vmha_task::down_wait_s;
  using vmha_task::node_is_down;
  const std::string base = "NodeName=node2 Arch=x86_64 CoresPerSocket=1 ";
  ck_assert(node_is_down(base + "State=DOWN* ThreadsPerCore=1"));
  ck_assert(node_is_down(base + "State=DOWN+NOT_RESPONDING ThreadsPerCore=1"));
  ck_assert(node_is_down(base + "State=DOWN+DRAIN ThreadsPerCore=1"));
  ck_assert(node_is_down(base + "State=IDLE+POWERED_DOWN ThreadsPerCore=1"));
  ck_assert(node_is_down(base + "State=ALLOCATED*+NOT_RESPONDING+DOWN\n"));
  ck_assert(!node_is_down(base + "State=IDLE* ThreadsPerCore=1"));  // not responding yet: may still run
  ck_assert(!node_is_down(base + "State=MIXED+POWERING_DOWN ThreadsPerCore=1"));
  ck_assert(!node_is_down(base + "State=ALLOCATED+DRAIN ThreadsPerCore=1"));
  ck_assert(!node_is_down(base + "Reason=DOWN State=MIXED ThreadsPerCore=1"));
  ck_assert(!node_is_down(base + "State=IDLE NextState=DOWN ThreadsPerCore=1"));
  ck_assert(!node_is_down(""));  // slurmctld unreachable: no verdict
  const std::string cfg = "SlurmctldTimeout        = 120 sec\nSlurmdTimeout           = 300 sec\nMessageTimeout          = 10 sec\n";
  ck_assert_int_eq(down_wait_s(cfg), 2 * 300 + 10 + 10);
  ck_assert_int_eq(down_wait_s("SlurmdTimeout           = 0 sec\n"), 0);  // never declared down
  ck_assert_int_eq(down_wait_s(""), 0);
}
END_TEST

// sbatch --ha: a batch script that starts srun stays a plain shell; any
// other runs in vmha. The check errs towards srun: a miss would run srun in
// a guest that cannot reach Slurm.
START_TEST(test_batch_script_srun_check) {
  ck_assert(starts_srun("srun ./prog"));
  ck_assert(starts_srun("#!/bin/sh\necho start; /usr/bin/srun ./prog\n"));
  ck_assert(starts_srun("#!/bin/bash\nfor i in 1 2; do srun -n1 hostname & done\nwait\n"));
  ck_assert(starts_srun("x=$(srun hostname)"));
  ck_assert(starts_srun("bash -c 'srun hostname'"));
  ck_assert(starts_srun("{ srun true; }"));
  ck_assert(starts_srun("S=srun\n$S true\n"));
  ck_assert(starts_srun("#!/bin/sh\nsrun\r\n"));
  ck_assert(starts_srun("# srun it later\n./prog\n"));  // a comment counts: unprotected, never broken
  ck_assert(!starts_srun("#!/bin/sh\n./prog\n"));
  ck_assert(!starts_srun("#!/bin/bash\nseq 1 10 | sort -n | md5sum\npython3 -c 'print(1)'\n"));
  ck_assert(!starts_srun("./srun_wrapper; echo sruns; mysrun"));
  ck_assert(!starts_srun(""));
}
END_TEST

START_TEST(test_batch_task_dir) {
  ck_assert(task_dir_name("0", "1") == std::string("step0.task1"));
  ck_assert(task_dir_name("12", "0") == std::string("step12.task0"));
  ck_assert(task_dir_name(kBatchStep, "0") == std::string("batch.task0"));
}
END_TEST

// vmha-task runs a copy of the batch script from the task's directory: same
// bytes, read-only, replacing a requeued job's earlier copy.
START_TEST(test_batch_script_copy) {
  std::string base = temp_dir(), err;
  std::string script(200000, 'x');
  script.replace(0, 10, "#!/bin/sh\n");
  std::ofstream(base + "/slurm_script") << script;
  std::ofstream(base + "/script") << "an earlier copy\n";
  ck_assert_int_eq(chmod((base + "/script").c_str(), 0500), 0);
  ck_assert_msg(vmha_task::copy_batch_script(base + "/slurm_script", base + "/script", &err), "%s", err.c_str());
  std::ifstream in(base + "/script");
  std::string copied((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ck_assert(copied == script);
  struct stat st;
  ck_assert_int_eq(stat((base + "/script").c_str(), &st), 0);
  ck_assert_int_eq(st.st_mode & 07777, 0500);
  ck_assert_int_eq(access((base + "/script.tmp").c_str(), F_OK), -1);
  ck_assert(!vmha_task::copy_batch_script(base + "/missing", base + "/script2", &err));
  ck_assert_msg(err.find("missing") != std::string::npos, "%s", err.c_str());
  ck_assert_int_eq(access((base + "/script2").c_str(), F_OK), -1);
  ck_assert_int_eq(std::system(("rm -rf " + base).c_str()), 0);
}
END_TEST

// The guest's TMPDIR: Slurm's /tmp (or none) lies outside the policy, so a
// directory below the working directory; one already below it is kept.
START_TEST(test_batch_tmpdir) {
  using vmha_task::batch_tmpdir;
  ck_assert(batch_tmpdir("/home/u/run", "/tmp", "12") == std::string("/home/u/run/.vmha-tmp.12"));
  ck_assert(batch_tmpdir("/home/u/run", nullptr, "12") == std::string("/home/u/run/.vmha-tmp.12"));
  ck_assert(batch_tmpdir("/home/u/run", "", "12") == std::string("/home/u/run/.vmha-tmp.12"));
  ck_assert(batch_tmpdir("/home/u/run", "tmp", "12") == std::string("/home/u/run/.vmha-tmp.12"));
  ck_assert(batch_tmpdir("/home/u/run", "/home/u/running", "12") == std::string("/home/u/run/.vmha-tmp.12"));
  ck_assert(batch_tmpdir("/home/u/run", "/home/u/run/tmp", "12") == std::string(""));
  ck_assert(batch_tmpdir("/home/u/run", "/home/u/run/", "12") == std::string(""));
  ck_assert(batch_tmpdir("/", "/tmp", "3") == std::string("/.vmha-tmp.3"));
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_spank");
  TCase* tc = tcase_create("core");
  tcase_set_timeout(tc, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(tc, test_ha_values);
  tcase_add_test(tc, test_plugstack_args);
  tcase_add_test(tc, test_plugstack_read_only_paths);
  tcase_add_test(tc, test_task_environment_round_trip);
  tcase_add_test(tc, test_hostlist);
  tcase_add_test(tc, test_backup_node);
  tcase_add_test(tc, test_results_and_comment);
  tcase_add_test(tc, test_state_dir_trusted);
  tcase_add_test(tc, test_job_dir_planted);
  tcase_add_test(tc, test_job_dir_removal);
  tcase_add_test(tc, test_fence_reads_slurm);
  tcase_add_test(tc, test_batch_script_srun_check);
  tcase_add_test(tc, test_batch_task_dir);
  tcase_add_test(tc, test_batch_script_copy);
  tcase_add_test(tc, test_batch_tmpdir);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
