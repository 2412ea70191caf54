// EpollSets: what each guest epoll instance watches, kept by vmha beside the
// host's epoll (which does the waiting) because a checkpoint must name the
// guest descriptors, and the host's interest list cannot be read back.
// Shared by the tree's fd tables; an entry belongs to the table whose
// descriptor was added (its descriptor numbers), and leaves when that
// descriptor is closed.
#pragma once
#include <sys/epoll.h>

#include <map>
#include <utility>

namespace vmha {

class FdTable;

class EpollSets {
 public:
  using Interest = std::map<int, epoll_event>;  // guest fd -> events and data

  void set(int channel, const FdTable* owner, int fd, const epoll_event& ev) { sets_[{channel, owner}][fd] = ev; }
  void erase(int channel, const FdTable* owner, int fd) { sets_[{channel, owner}].erase(fd); }
  // What the epoll instance of `channel` watches of owner's descriptors.
  const Interest& interest(int channel, const FdTable* owner) { return sets_[{channel, owner}]; }
  // owner closed fd (or all of them: fd -1): it leaves every instance.
  void forget(const FdTable* owner, int fd) {
    for (auto& [key, interest] : sets_)
      if (key.second == owner) {
        if (fd < 0)
          interest.clear();
        else
          interest.erase(fd);
      }
  }

 private:
  std::map<std::pair<int, const FdTable*>, Interest> sets_;
};

}  // namespace vmha
