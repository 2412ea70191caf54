// Replication wire format: CRC32C, framing (every corruption and truncation is
// rejected with a message naming the check), message payloads, HMAC-SHA256
// (RFC 4231 vectors) and the shared-key authenticator and its key file rules.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "vmha/protocol/wire_io.h"
#include "vmha/protocol/crc32c.h"
#include "vmha/protocol/frame.h"
#include "vmha/protocol/messages.h"
#include "vmha/transport/auth.h"
#include "tests/unit/skip.h"

// Check defines macros (fail, ...) that clash with C++ headers: include it last.
#include <check.h>

using namespace vmha;

namespace {

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

bool has(const Status& s, const char* what) { return s.message().find(what) != std::string::npos; }

std::string hex(const std::vector<std::uint8_t>& v) {
  std::string out;
  char b[3];
  for (auto c : v) {
    std::snprintf(b, sizeof b, "%02x", c);
    out += b;
  }
  return out;
}

// A header with a valid header checksum but chosen fields.
std::vector<std::uint8_t> forged_header(std::uint16_t version, std::uint16_t type, std::uint32_t length) {
  WireWriter w;
  w.u32(kFrameMagic);
  w.u16(version);
  w.u16(type);
  w.u64(0);
  w.u32(length);
  w.u32(0);
  w.u32(0);
  w.u32(crc32c(0, w.data().data(), w.data().size()));
  return w.take();
}

Frame sample_frame() { return StateMsg{7, std::vector<std::uint8_t>(300, 0xab)}.to_frame(); }

}  // namespace

START_TEST(crc32c_known_values) {
  auto v = bytes("123456789");
  ck_assert_uint_eq(crc32c(v), 0xE3069283u);  // the standard check value
  ck_assert_uint_eq(crc32c(0, nullptr, 0), 0u);
  std::vector<std::uint8_t> zeros(32, 0);
  ck_assert_uint_eq(crc32c(zeros), 0x8A9136AAu);  // RFC 3720 B.4
  // Chaining over odd split points equals one pass.
  std::vector<std::uint8_t> big(10007);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 31 + 7);
  for (std::size_t cut : {0ul, 1ul, 7ul, 8ul, 4095ul, 10007ul}) {
    std::uint32_t a = crc32c(0, big.data(), cut);
    ck_assert_uint_eq(crc32c(a, big.data() + cut, big.size() - cut), crc32c(big));
  }
}
END_TEST

START_TEST(frame_round_trip) {
  Frame f = sample_frame();
  auto enc = encode_frame(f);
  ck_assert_uint_eq(enc.size(), kFrameHeaderSize + f.payload.size());
  auto d = decode_frame(enc);
  ck_assert_msg(d.ok(), "%s", d.status().message().c_str());
  ck_assert(d.value().type == MessageType::kState);
  ck_assert_uint_eq(d.value().epoch, 7);
  ck_assert(d.value().payload == f.payload);
}
END_TEST

START_TEST(every_corrupted_byte_is_rejected) {
  auto enc = encode_frame(sample_frame());
  for (std::size_t i = 0; i < enc.size(); ++i) {
    auto bad = enc;
    bad[i] ^= 0x04;
    auto d = decode_frame(bad);
    ck_assert_msg(!d.ok(), "flipping byte %zu went unnoticed", i);
    if (i < 4)
      ck_assert_msg(has(d.status(), "bad frame magic"), "%s", d.status().message().c_str());
    else if (i < kFrameHeaderSize)
      ck_assert_msg(has(d.status(), "header checksum mismatch"), "%s", d.status().message().c_str());
    else
      ck_assert_msg(has(d.status(), "payload checksum mismatch in State frame of epoch 7"), "%s",
                    d.status().message().c_str());
  }
}
END_TEST

START_TEST(truncated_frames_are_rejected) {
  auto enc = encode_frame(sample_frame());
  auto h = decode_frame(std::span<const std::uint8_t>(enc).first(20));
  ck_assert(!h.ok());
  ck_assert_msg(has(h.status(), "truncated frame header: 20 of 32 bytes"), "%s", h.status().message().c_str());
  auto p = decode_frame(std::span<const std::uint8_t>(enc).first(enc.size() - 1));
  ck_assert(!p.ok());
  ck_assert_msg(has(p.status(), "truncated State frame of epoch 7: header announces 304 payload bytes, 303 present"),
                "%s", p.status().message().c_str());
  auto extra = enc;
  extra.push_back(0);
  auto x = decode_frame(extra);
  ck_assert(!x.ok());
  ck_assert_msg(has(x.status(), "1 bytes after the end"), "%s", x.status().message().c_str());
}
END_TEST

START_TEST(forged_headers_are_rejected) {
  auto v = decode_frame_header(forged_header(2, 13, 0));
  ck_assert_msg(has(v.status(), "unsupported protocol version 2"), "%s", v.status().message().c_str());
  auto t = decode_frame_header(forged_header(1, 999, 0));
  ck_assert_msg(has(t.status(), "unknown message type 999"), "%s", t.status().message().c_str());
  auto big = decode_frame_header(forged_header(1, 13, kMaxFramePayload + 1));
  ck_assert_msg(has(big.status(), "limit is"), "%s", big.status().message().c_str());
  // Before authentication only small frames pass.
  auto pre = decode_frame_header(forged_header(1, 1, 5000), kMaxUnauthenticatedPayload);
  ck_assert_msg(has(pre.status(), "Hello frame announces 5000 payload bytes, limit is 4096"), "%s",
                pre.status().message().c_str());
  auto junk = decode_frame_header(bytes("GET / HTTP/1.1\r\nHost: x\r\n\r\n......"));
  ck_assert_msg(has(junk.status(), "does not speak the vmha replication protocol"), "%s",
                junk.status().message().c_str());
}
END_TEST

START_TEST(page_list_round_trip_and_damage) {
  PageListMsg m;
  m.epoch = 3;
  m.seq = 9;
  m.region = 1;
  m.flags = PageListMsg::kHasChecksums | PageListMsg::kNotifyWhenPulled;
  m.pages = {{5, 5 * 4096}, {6, 6 * 4096}, {100, 0}};
  m.crcs = {1, 2, 3};
  Frame f = m.to_frame();
  auto d = PageListMsg::from(f);
  ck_assert_msg(d.ok(), "%s", d.status().message().c_str());
  ck_assert_uint_eq(d.value().epoch, 3);
  ck_assert_uint_eq(d.value().seq, 9);
  ck_assert_uint_eq(d.value().region, 1);
  ck_assert_uint_eq(d.value().pages.size(), 3);
  ck_assert_uint_eq(d.value().pages[2].page, 100);
  ck_assert_uint_eq(d.value().crcs[1], 2);

  Frame cut = f;
  cut.payload.resize(cut.payload.size() - 4);
  auto c = PageListMsg::from(cut);
  ck_assert(!c.ok());
  ck_assert_msg(has(c.status(), "malformed PageList payload: page count 3 needs 60 bytes, payload has 56"), "%s",
                c.status().message().c_str());
  auto wrong = StateMsg::from(f);
  ck_assert_msg(has(wrong.status(), "expected a State message, got PageList"), "%s", wrong.status().message().c_str());
}
END_TEST

START_TEST(other_messages_round_trip) {
  RegionsMsg r;
  r.regions.push_back(RegionInfo{0, 0x7f0000000000, 1 << 20, {1, 2, 3, 4}});
  auto rd = RegionsMsg::from(r.to_frame());
  ck_assert(rd.ok());
  ck_assert_uint_eq(rd.value().regions[0].base, 0x7f0000000000);
  ck_assert(rd.value().regions[0].rkey == std::vector<std::uint8_t>({1, 2, 3, 4}));

  auto e = EndMsg::from(EndMsg{4, 100, 7, 12, 0xdeadbeef}.to_frame());
  ck_assert(e.ok());
  ck_assert_uint_eq(e.value().distinct_pages, 100);
  ck_assert_uint_eq(e.value().state_crc, 0xdeadbeef);

  auto n = NackMsg::from(NackMsg{4, "no"}.to_frame());
  ck_assert(n.ok() && n.value().reason == "no" && n.value().epoch == 4);

  Frame hb = HeartbeatMsg{1, 2}.to_frame();
  hb.payload.push_back(0);
  auto h = HeartbeatMsg::from(hb);
  ck_assert_msg(has(h.status(), "1 unexpected bytes after the payload"), "%s", h.status().message().c_str());

  HelloMsg hello;
  hello.method = "hmac-sha256";
  hello.nonce[31] = 9;
  auto hd = HelloMsg::from(hello.to_frame());
  ck_assert(hd.ok() && hd.value().method == "hmac-sha256" && hd.value().nonce[31] == 9);
}
END_TEST

START_TEST(hmac_sha256_rfc4231) {
  std::vector<std::uint8_t> key1(20, 0x0b);
  std::string case1 = hex(hmac_sha256(key1, bytes("Hi There")));
  std::string case2 = hex(hmac_sha256(bytes("Jefe"), bytes("what do ya want for nothing?")));
  ck_assert_str_eq(case1.c_str(), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  ck_assert_str_eq(case2.c_str(), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}
END_TEST

START_TEST(shared_key_proofs) {
  std::vector<std::uint8_t> key(32, 1), other(32, 2), transcript(64, 3);
  auto a = SharedKeyAuthenticator::from_key(key);
  auto b = SharedKeyAuthenticator::from_key(other);
  ck_assert(a.ok() && b.ok());
  auto proof = a.value()->prove("primary", transcript);
  ck_assert(proof.ok());
  ck_assert(a.value()->verify("primary", transcript, proof.value()).ok());
  ck_assert(!a.value()->verify("backup", transcript, proof.value()).ok());  // bound to the role
  auto t2 = transcript;
  t2[0] ^= 1;
  ck_assert(!a.value()->verify("primary", t2, proof.value()).ok());  // bound to the nonces
  ck_assert(!b.value()->verify("primary", transcript, proof.value()).ok());
  auto shortp = proof.value();
  shortp.pop_back();
  ck_assert(!a.value()->verify("primary", transcript, shortp).ok());
  auto small = SharedKeyAuthenticator::from_key(std::vector<std::uint8_t>(8, 1));
  ck_assert_msg(has(small.status(), "shared key has 8 bytes, expected 16 to 4096"), "%s",
                small.status().message().c_str());
}
END_TEST

START_TEST(key_file_rules) {
  char dir[] = "/tmp/vmha-key-XXXXXX";
  ck_assert(mkdtemp(dir) != nullptr);
  std::string path = std::string(dir) + "/job.key";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("0123456789abcdef0123456789abcdef", f);
  std::fclose(f);
  chmod(path.c_str(), 0644);
  auto open_world = SharedKeyAuthenticator::from_file(path);
  ck_assert_msg(has(open_world.status(), "accessible by group or others (mode 0644); run: chmod 600"), "%s",
                open_world.status().message().c_str());
  chmod(path.c_str(), 0600);
  auto ok = SharedKeyAuthenticator::from_file(path);
  ck_assert_msg(ok.ok(), "%s", ok.status().message().c_str());
  auto missing = SharedKeyAuthenticator::from_file(path + ".none");
  ck_assert_msg(has(missing.status(), "No such file"), "%s", missing.status().message().c_str());
  // A FIFO is refused at once (reading it would wait for a writer for ever).
  const std::string fifo = std::string(dir) + "/fifo.key";
  ck_assert_int_eq(mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = SharedKeyAuthenticator::from_file(fifo);
  ck_assert_msg(has(from_fifo.status(), "not a regular file"), "%s", from_fifo.status().message().c_str());
  unlink(fifo.c_str());
  // A 0600 key of another user is not this job's secret.
  if (::geteuid() == 0) {
    ck_assert_int_eq(chown(path.c_str(), 65534, 65534), 0);
    auto others = SharedKeyAuthenticator::from_file(path);
    ck_assert_msg(has(others.status(), "belongs to uid 65534, not to the user running vmha"), "%s",
                  others.status().message().c_str());
  }
  unlink(path.c_str());
  rmdir(dir);
}
END_TEST

// MUNGE credentials against a private munged (own key and socket), when the
// munged binary exists and we are root; otherwise the case is skipped.
START_TEST(munge_credentials_bind_the_transcript) {
  SKIP_UNLESS(test_support::is_root(), "needs root to start munged");
  SKIP_UNLESS(!test_support::pretend_missing("munged") && std::system("command -v munged >/dev/null 2>&1") == 0,
              "munged is not installed");
  char dir[] = "/tmp/vmha-munge-XXXXXX";
  ck_assert(mkdtemp(dir) != nullptr);
  std::string d = dir;
  std::string keygen = "head -c 1024 /dev/urandom > " + d + "/key && chmod 600 " + d + "/key";
  ck_assert_msg(std::system(keygen.c_str()) == 0, "cannot write a munge key in %s", dir);
  // munged in the foreground as our child, so that we reap it.
  std::string sock = d + "/sock", pidf = d + "/pid", logf = d + "/log", seed = d + "/seed", key = d + "/key";
  std::string a1 = "--socket=" + sock, a2 = "--pid-file=" + pidf, a3 = "--log-file=" + logf, a4 = "--seed-file=" + seed,
              a5 = "--key-file=" + key;
  pid_t munged = fork();
  if (munged == 0) {
    execlp("munged", "munged", "--foreground", "--force", a1.c_str(), a2.c_str(), a3.c_str(), a4.c_str(), a5.c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  Result<std::unique_ptr<Authenticator>> a = Status::error("not tried");
  for (int i = 0; i < 50 && !a.ok(); ++i, usleep(50000)) a = MungeAuthenticator::create(sock);
  auto stop = [&] {
    kill(munged, SIGTERM);
    waitpid(munged, nullptr, 0);
    std::string rm = "rm -rf " + d;
    if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "munge_credentials: cleanup failed\n");
  };
  if (!a.ok()) {
    stop();
    ck_abort_msg("%s", a.status().message().c_str());
  }
  std::vector<std::uint8_t> transcript(64, 5);
  auto proof = a.value()->prove("primary", transcript);
  bool good = proof.ok() && a.value()->verify("primary", transcript, proof.value()).ok();
  bool other_role = proof.ok() && !a.value()->verify("backup", transcript, proof.value()).ok();
  auto t2 = transcript;
  t2[3] ^= 1;
  Status replay = proof.ok() ? a.value()->verify("primary", t2, proof.value()) : Status::error("no proof");
  Status garbage = a.value()->verify("primary", transcript, bytes("MUNGE:garbage:"));
  stop();
  ck_assert_msg(proof.ok(), "%s", proof.status().message().c_str());
  ck_assert(good);
  ck_assert(other_role);
  ck_assert(!replay.ok());
  ck_assert_msg(has(garbage, "munge credential refused"), "%s", garbage.message().c_str());
}
END_TEST

int main() {
  Suite* s = suite_create("vmha_protocol");
  TCase* tc = tcase_create("wire");
  tcase_set_timeout(tc, 60);  // Check's default, 4 s, fails on a loaded host
  tcase_add_test(tc, crc32c_known_values);
  tcase_add_test(tc, frame_round_trip);
  tcase_add_test(tc, every_corrupted_byte_is_rejected);
  tcase_add_test(tc, truncated_frames_are_rejected);
  tcase_add_test(tc, forged_headers_are_rejected);
  tcase_add_test(tc, page_list_round_trip_and_damage);
  tcase_add_test(tc, other_messages_round_trip);
  tcase_add_test(tc, hmac_sha256_rfc4231);
  tcase_add_test(tc, shared_key_proofs);
  tcase_add_test(tc, key_file_rules);
  tcase_add_test(tc, munge_credentials_bind_the_transcript);
  suite_add_tcase(s, tc);
  SRunner* sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? 0 : 1;
}
