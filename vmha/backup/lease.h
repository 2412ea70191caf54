// When is the peer lost? Only when BOTH hold: the connection is gone, and
// nothing was heard from the peer for longer than the lease. A dropped
// connection alone (a transient network fault, a reconnect) or silence alone (a
// long pause on a live connection) is not enough. Time is passed in, so the
// rule is tested without sleeping.
//
// Split brain: the backup takes over only when peer_lost() holds AND the
// caller's fencing check confirms the primary is dead (vmha(1)); a primary that
// loses its backup stops releasing output instead of continuing alone.
#pragma once

#include <chrono>

namespace vmha {

class Lease {
 public:
  using Clock = std::chrono::steady_clock;

  Lease(Clock::duration length, Clock::time_point now) : length_(length), last_heard_(now) {}

  void heard(Clock::time_point now) {
    if (now > last_heard_) last_heard_ = now;
  }
  void connection_up(Clock::time_point now) {
    connected_ = true;
    heard(now);
  }
  void connection_lost() { connected_ = false; }

  bool connected() const { return connected_; }
  Clock::duration silence(Clock::time_point now) const { return now - last_heard_; }
  bool peer_lost(Clock::time_point now) const { return !connected_ && silence(now) > length_; }
  Clock::duration length() const { return length_; }

 private:
  Clock::duration length_;
  Clock::time_point last_heard_;
  bool connected_ = false;
};

// When the next heartbeat is due (sender side).
class HeartbeatTimer {
 public:
  using Clock = std::chrono::steady_clock;
  HeartbeatTimer(Clock::duration interval, Clock::time_point now) : interval_(interval), last_(now) {}
  bool due(Clock::time_point now) const { return now - last_ >= interval_; }
  void sent(Clock::time_point now) { last_ = now; }

 private:
  Clock::duration interval_;
  Clock::time_point last_;
};

}  // namespace vmha
