#include "vmha/track/dirty_tracker.h"

#include <algorithm>

#include "vmha/track/bitmap_tracker.h"
#include "vmha/track/hot_tracker.h"
#include "vmha/track/ring_tracker.h"

namespace vmha {

Status parse_tracker_kind(const std::string& name, TrackerKind* out) {
  if (name == "ring")
    *out = TrackerKind::kRing;
  else if (name == "bitmap")
    *out = TrackerKind::kBitmap;
  else if (name == "none")
    *out = TrackerKind::kNone;
  else if (name == "hot")
    *out = TrackerKind::kHot;
  else
    return Status::error("unknown tracker '" + name + "': expected hot, ring, bitmap or none");
  return Status();
}

const char* tracker_name(TrackerKind kind) {
  switch (kind) {
    case TrackerKind::kRing:
      return "ring";
    case TrackerKind::kBitmap:
      return "bitmap";
    case TrackerKind::kNone:
      return "none";
    case TrackerKind::kHot:
      return "hot";
  }
  return "?";
}

void DirtyTracker::add_vmm_pages(std::vector<uint64_t>& pfns) {
  if (!log_) return;
  size_t before = pfns.size();
  log_->drain(pfns);
  stats_.vmm_pages += pfns.size() - before;
}

void DirtyTracker::sort_unique(std::vector<uint64_t>& pfns) {
  std::sort(pfns.begin(), pfns.end());
  pfns.erase(std::unique(pfns.begin(), pfns.end()), pfns.end());
}

namespace {
// No KVM log: only the VMM's writes are known (a baseline for overhead).
class NoTracker : public DirtyTracker {
 public:
  TrackerKind kind() const override { return TrackerKind::kNone; }
  Status harvest(std::vector<uint64_t>& pfns) override {
    pfns.clear();
    add_vmm_pages(pfns);
    sort_unique(pfns);
    ++stats_.harvests;
    return Status();
  }
};
}  // namespace

std::unique_ptr<DirtyTracker> make_tracker(TrackerKind kind, uint64_t guest_bytes) {
  switch (kind) {
    case TrackerKind::kRing:
      return std::make_unique<RingTracker>();
    case TrackerKind::kBitmap:
      return std::make_unique<BitmapTracker>(guest_bytes);
    case TrackerKind::kHot:
      return std::make_unique<HotTracker>(guest_bytes);
    case TrackerKind::kNone:
      break;
  }
  return std::make_unique<NoTracker>();
}

}  // namespace vmha
