// Sockets inside vmha (vmha/sys/socket_calls.cc, socket_name_calls.cc):
// tests/vmha/socket_probe.c prints the same facts under `vmha run` as
// natively (an unconnected AF_UNIX socket, socketpairs of three types
// carrying messages between processes; a server bound in the working
// directory serving a forked child, and checkpointed while the child's
// connection waits in its queue); Python's multiprocessing Listener and
// Client talk through a name; a state whose socket records are corrupted
// byte by byte is refused or restored, never a crash; epoll watches a socketpair end, a pipe and a
// listener as natively, and again after a restore; TCP between a forked
// client and a server on 127.0.0.1 (and an IPv6 listener) as natively and
// restored with the connection waiting; Python's http.server and urllib on
// localhost; Python's asyncio serves
// and connects through a name; a user lookup with HOME unset (glibc then asks nscd's socket)
// prints nothing from vmha — a batch job on a host without HOME failed so;
// a live service outside the VM is refused, once reported; a network socket
// is ENOSYS with its family's name; a checkpoint taken while messages wait
// in a datagram, a seqpacket and a stream pair restores each message whole.
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/vmha/vm_checkpoint_util.h"
#include "tests/vmha/vmha_test_util.h"
#include "vmha/vmm/vm.h"

#include <check.h>  // last: it defines a fail() macro
#include "tests/unit/run_suite.h"

using namespace vmha;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

std::string canonical(const std::string& path) {
  char real[PATH_MAX];
  ck_assert_msg(realpath(path.c_str(), real) != nullptr, "%s is missing", path.c_str());
  return real;
}
std::string probe() { return canonical(vmha_test::builddir() + "/tests/vmha/socket_probe"); }
std::string probe_dir() { return probe().substr(0, probe().rfind('/')); }

vmha_test::Captured under_vmha(const std::vector<std::string>& argv, const std::string& dir = "") {
  std::vector<std::string> vm = {vmha_test::vmha_bin(), "run", "--ro", probe_dir(), "--"};
  vm.insert(vm.end(), argv.begin(), argv.end());
  return vmha_test::run_capture(vm, dir.empty() ? vmha_test::make_temp_dir() : dir);
}

// argv natively and under `vmha run`, each in a directory of its own: the
// same stdout, both exit 0. Returns what vmha printed.
vmha_test::Captured same_as_native(const std::vector<std::string>& argv) {
  vmha_test::Captured native = vmha_test::run_capture(argv, vmha_test::make_temp_dir());
  vmha_test::Captured c = under_vmha(argv);
  ck_assert_msg(native.exit_code() == 0 && c.exit_code() == 0, "exit %d natively, %d under vmha: %s",
                native.exit_code(), c.exit_code(), c.err.c_str());
  ck_assert_msg(c.out == native.out, "under vmha:\n%s\nnatively:\n%s\n%s", c.out.c_str(), native.out.c_str(),
                c.err.c_str());
  return c;
}

START_TEST(probe_uses_sockets_as_natively) {
  vmha_test::Captured c = same_as_native({probe()});
  ck_assert_msg(contains(c.out, "dgram: 1=a(name 0) 2=bb 3=ccc(name 0)\n") && contains(c.out, "done\n") &&
                    !contains(c.out, " NO\n"),
                "%s", c.out.c_str());
  ck_assert_msg(c.err.empty(), "vmha said: %s", c.err.c_str());
}
END_TEST

START_TEST(server_serves_a_child_as_natively) {
  vmha_test::Captured c = same_as_native({probe(), "server"});
  ck_assert_msg(contains(c.out, "second bind: EADDRINUSE\n") && contains(c.out, "poll: 1 readable\n") &&
                    contains(c.out, "child got: ack\n") && contains(c.out, "accepted (peer 2 bytes): hello\n"),
                "%s", c.out.c_str());
  ck_assert_msg(c.err.empty(), "vmha said: %s", c.err.c_str());
}
END_TEST

START_TEST(checkpoint_keeps_a_waiting_connection) {
  const std::string want = vmha_test::run_capture({probe(), "server"}, vmha_test::make_temp_dir()).out;
  const std::string got = vmha_test::output_across_checkpoint({probe(), "server"}, SYS_getppid);
  ck_assert_msg(got == want, "restored:\n%s\nnative:\n%s", got.c_str(), want.c_str());
}
END_TEST

START_TEST(epoll_watches_as_natively_and_after_a_restore) {
  vmha_test::Captured c = same_as_native({probe(), "epoll"});
  ck_assert_msg(contains(c.out, "ready: socketpair, pipe, listener\ndone\n"), "%s", c.out.c_str());
  ck_assert_msg(c.err.empty(), "vmha said: %s", c.err.c_str());
  const std::string got = vmha_test::output_across_checkpoint({probe(), "epoll"}, SYS_getppid);
  ck_assert_msg(got == c.out, "restored:\n%s\nnative:\n%s", got.c_str(), c.out.c_str());
}
END_TEST

START_TEST(tcp_on_localhost_as_natively_and_after_a_restore) {
  vmha_test::Captured c = same_as_native({probe(), "tcp"});
  ck_assert_msg(contains(c.out, "child got: PONG\n") && contains(c.out, "accepted from AF_INET: ping\n") &&
                    contains(c.out, "second bind: EADDRINUSE\n") && !contains(c.out, " NO\n"),
                "%s", c.out.c_str());
  ck_assert_msg(c.err.empty(), "vmha said: %s", c.err.c_str());
  const std::string got = vmha_test::output_across_checkpoint({probe(), "tcp"}, SYS_getppid);
  ck_assert_msg(got == c.out, "restored:\n%s\nnative:\n%s", got.c_str(), c.out.c_str());
}
END_TEST

START_TEST(python_http_server_on_localhost) {
  SKIP_UNLESS(test_support::have_program("/usr/bin/python3"), "/usr/bin/python3 is missing");
  vmha_test::Captured c = same_as_native(
      {"/usr/bin/python3", "-c",
       "import http.server, threading, urllib.request\n"
       "class H(http.server.BaseHTTPRequestHandler):\n"
       "    def do_GET(self):\n"
       "        body = b'hello ' + self.path.encode()\n"
       "        self.send_response(200); self.send_header('Content-Length', str(len(body)))\n"
       "        self.end_headers(); self.wfile.write(body)\n"
       "    def log_message(self, *a): pass\n"
       "srv = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
       "t = threading.Thread(target=srv.serve_forever); t.start()\n"
       "for i in range(3):\n"
       "    print(urllib.request.urlopen('http://127.0.0.1:%d/x%d' % (srv.server_address[1], i)).read().decode())\n"
       "srv.shutdown(); t.join()\n"});
  ck_assert_str_eq(c.out.c_str(), "hello /x0\nhello /x1\nhello /x2\n");
  ck_assert_msg(c.err.empty(), "vmha said: %s", c.err.c_str());
}
END_TEST

START_TEST(python_asyncio_serves_through_a_name) {
  SKIP_UNLESS(test_support::have_program("/usr/bin/python3"), "/usr/bin/python3 is missing");
  vmha_test::Captured c = same_as_native({"/usr/bin/python3", "-c",
                                          "import asyncio\n"
                                          "async def main():\n"
                                          "    async def handle(r, w):\n"
                                          "        w.write((await r.readline()).upper()); await w.drain(); w.close()\n"
                                          "    srv = await asyncio.start_unix_server(handle, 'a.sock')\n"
                                          "    r, w = await asyncio.open_unix_connection('a.sock')\n"
                                          "    w.write(b'hello\\n'); await w.drain()\n"
                                          "    print((await r.readline()).decode().strip())\n"
                                          "    w.close(); srv.close(); await srv.wait_closed()\n"
                                          "asyncio.run(main())\n"});
  ck_assert_str_eq(c.out.c_str(), "HELLO\n");
  ck_assert_msg(c.err.empty(), "vmha said: %s", c.err.c_str());
}
END_TEST

// Every byte near the listener's and the bound socket's records (found by
// their name) set to 0, 0xff or flipped: Vm::restore refuses the state or
// restores it (a name or a count may change harmlessly), and never crashes.
START_TEST(corrupted_socket_records_are_refused_or_restored) {
  std::vector<uint8_t> state;
  VmOptions opts;
  vmha_test::output_across_checkpoint({probe(), "server"}, SYS_getppid, &state, &opts);
  const std::string name = "srv.sock";
  std::vector<size_t> at;
  for (auto it = state.begin(); (it = std::search(it, state.end(), name.begin(), name.end())) != state.end(); ++it)
    at.push_back(static_cast<size_t>(it - state.begin()));
  ck_assert_msg(at.size() >= 2, "the state names %s %zu times", name.c_str(), at.size());
  int refused = 0, tried = 0;
  for (size_t pos : at)
    for (size_t i = pos < 48 ? 0 : pos - 48; i < std::min(state.size(), pos + 48); ++i)
      for (int how = 0; how < 3; ++how) {
        std::vector<uint8_t> bad = state;
        bad[i] = how == 0 ? 0 : how == 1 ? 0xff : bad[i] ^ 0x80;
        if (bad[i] == state[i]) continue;
        std::unique_ptr<Vm> back;
        refused += !Vm::restore(opts, bad, &back).ok();
        ++tried;
      }
  std::printf("corrupted socket records: %d of %d states refused, the rest restored\n", refused, tried);
  ck_assert_int_gt(refused, 0);
}
END_TEST

START_TEST(python_listener_and_client_talk) {
  SKIP_UNLESS(test_support::have_program("/usr/bin/python3"), "/usr/bin/python3 is missing");
  vmha_test::Captured c = same_as_native({"/usr/bin/python3", "-c",
                                          "import os\n"
                                          "from multiprocessing.connection import Listener, Client\n"
                                          "with Listener('py.sock', 'AF_UNIX') as l:\n"
                                          "    pid = os.fork()\n"
                                          "    if pid == 0:\n"
                                          "        with Client('py.sock', 'AF_UNIX') as c:\n"
                                          "            c.send(['hello', 41])\n"
                                          "            print('child got', c.recv(), flush=True)\n"
                                          "        os._exit(0)\n"
                                          "    with l.accept() as conn:\n"
                                          "        conn.send(conn.recv()[1] + 1)\n"
                                          "    os.waitpid(pid, 0)\n"
                                          "print('parent done', os.path.exists('py.sock'))\n"});
  ck_assert_str_eq(c.out.c_str(), "child got 42\nparent done False\n");
  ck_assert_msg(c.err.empty(), "vmha said: %s", c.err.c_str());  // selectors' epoll probe, once ENOSYS
}
END_TEST

START_TEST(user_lookup_without_home_says_nothing) {
  for (const char* p : {"/usr/bin/env", "/usr/bin/bash", "/usr/bin/id"})
    SKIP_UNLESS(test_support::have_program(p), std::string(p) + " is missing");
  const std::vector<std::string> argv = {"/usr/bin/env", "-u", "HOME", "/usr/bin/bash", "-c", "echo ~; id -un"};
  vmha_test::Captured native = vmha_test::run_capture(argv, vmha_test::make_temp_dir());
  vmha_test::Captured c = under_vmha(argv);
  ck_assert_msg(c.exit_code() == 0 && c.out == native.out, "exit %d, under vmha:\n%s\nnatively:\n%s", c.exit_code(),
                c.out.c_str(), native.out.c_str());
  ck_assert_msg(c.err.empty(), "vmha said: %s", c.err.c_str());
}
END_TEST

// A host service listening on `path` (returned: its socket).
int host_service(const std::string& path) {
  int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strncpy(sa.sun_path, path.c_str(), sizeof sa.sun_path - 1);
  ck_assert_int_eq(bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  ck_assert_int_eq(listen(s, 4), 0);
  return s;
}

// Outside the policy, connect answers EACCES, as stat does, whether a
// service is there or nothing: the guest learns nothing of the host's files
// (and vmha says nothing: glibc tries nscd's socket at every user lookup).
START_TEST(a_service_outside_is_refused_once) {
  const std::string dir = vmha_test::outside_tmp_dir(), path = dir + "/service.sock";
  int s = host_service(path);
  vmha_test::Captured native = vmha_test::run_capture({probe(), "connect", path}, vmha_test::make_temp_dir());
  ck_assert_str_eq(native.out.c_str(), "connect: ok EISCONN\n");  // the service is there
  vmha_test::Captured c = under_vmha({probe(), "connect", path});
  close(s);
  ck_assert_str_eq(c.out.c_str(), "connect: Permission denied Permission denied\n");
  c = under_vmha({probe(), "connect", dir + "/nothing.sock"});
  ck_assert_str_eq(c.out.c_str(), "connect: Permission denied Permission denied\n");
}
END_TEST

// A process that connects to its own blocking listener goes on, as
// natively (the VM hung: the listener's flags were the VMM's eventfd's).
START_TEST(a_process_connects_to_its_own_listener) {
  vmha_test::Captured c = same_as_native({probe(), "self"});
  ck_assert_str_eq(c.out.c_str(), "self connect: ok\nself accept: ok\nself message: ok\n");
}
END_TEST

// Inside the working directory a host process's socket is a service
// outside the VM all the same: ECONNREFUSED, reported once.
START_TEST(a_service_in_the_workdir_is_refused_once) {
  const std::string dir = vmha_test::make_temp_dir();
  int s = host_service(dir + "/service.sock");
  vmha_test::Captured c = under_vmha({probe(), "connect", "service.sock"}, dir);
  close(s);
  ck_assert_str_eq(c.out.c_str(), "connect: ECONNREFUSED ECONNREFUSED\n");
  ck_assert_msg(count(c.err, "connect to service.sock refused") == 1 && count(c.err, "\n") == 1, "vmha said: %s",
                c.err.c_str());
}
END_TEST

START_TEST(network_is_enosys_with_its_name) {
  vmha_test::Captured c = under_vmha({probe(), "inet"});
  ck_assert_str_eq(c.out.c_str(), "inet: ENOSYS\n");
  ck_assert_msg(contains(c.err, "socket(AF_INET): network from the guest is not supported"), "vmha said: %s",
                c.err.c_str());
}
END_TEST

START_TEST(checkpoint_keeps_every_message_whole) {
  const std::string want = vmha_test::run_capture({probe()}, vmha_test::make_temp_dir()).out;
  const std::string got = vmha_test::output_across_checkpoint({probe()}, SYS_getppid);
  ck_assert_msg(got == want, "restored:\n%s\nnative:\n%s", got.c_str(), want.c_str());
}
END_TEST

}  // namespace

int main() {
  vmha_test::require_kvm();
  Suite* s = suite_create("vmha_socket");
  TCase* tc = tcase_create("socket");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, probe_uses_sockets_as_natively);
  tcase_add_test(tc, server_serves_a_child_as_natively);
  tcase_add_test(tc, checkpoint_keeps_a_waiting_connection);
  tcase_add_test(tc, corrupted_socket_records_are_refused_or_restored);
  tcase_add_test(tc, python_listener_and_client_talk);
  tcase_add_test(tc, epoll_watches_as_natively_and_after_a_restore);
  tcase_add_test(tc, python_asyncio_serves_through_a_name);
  tcase_add_test(tc, tcp_on_localhost_as_natively_and_after_a_restore);
  tcase_add_test(tc, python_http_server_on_localhost);
  tcase_add_test(tc, user_lookup_without_home_says_nothing);
  tcase_add_test(tc, a_service_outside_is_refused_once);
  tcase_add_test(tc, a_service_in_the_workdir_is_refused_once);
  tcase_add_test(tc, a_process_connects_to_its_own_listener);
  tcase_add_test(tc, network_is_enosys_with_its_name);
  tcase_add_test(tc, checkpoint_keeps_every_message_whole);
  suite_add_tcase(s, tc);
  return test_support::run_suite(s);
}
