#include "policy/learn/agents/ordering_agent.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "policy/learn/agents/dense_kernel.h"

namespace duet::learn {

// The network of nets_torch.h (OrderingNetImpl) evaluated with the blocked
// kernels of dense_kernel.h: pass 1 embeds the queue block by block and
// pools it; pass 2 scores every job (and writes its message) from its
// embedding and the shared context. Weights are stored transposed and padded
// to the kernel's width once, at construction.
struct OrderingAgent::Impl {
  Impl(const Model& m, bool avx2);

  NetConfig cfg;
  FeatureNorm job_norm, cluster_norm;
  bool avx2;
  std::size_t d, hid, hidp, emb, embp, hh, hhp, om, omp;
  std::vector<float> w1t, b1;  // d x hidp
  std::vector<float> w2t, b2;  // hid x embp
  std::vector<float> wjt;      // emb x (hhp + omp): head1's and msg's job-embedding columns
  std::vector<float> wst;      // emb x hhp: head1's alone (scores without messages)
  std::vector<float> wg, bh;   // head1's [context; cluster; placement message] columns, hh rows
  std::vector<float> wc, bm;   // msg's context columns, om rows
  std::vector<float> w3;       // head2 weights (hhp, zero padded)
  float b3 = 0;
  std::vector<float> wgate;    // preemptive: gate weights over [context; cluster]
  float bgate = 0;

  void run(std::span<const float> jobs, std::size_t n, std::span<const float> cluster, std::span<const float> pmsg,
           std::vector<float>& scores, std::vector<float>* messages, float* gate) const;
};

namespace {

// Columns [col0, col0 + cols) of a row-major [out, in] weight, transposed
// into rows of `to` (stride ld) starting at column to_col.
void put_transposed(const NamedArray& w, std::size_t col0, std::size_t cols, std::vector<float>& to, std::size_t ld,
                    std::size_t to_col) {
  const auto out = static_cast<std::size_t>(w.shape[0]), in = static_cast<std::size_t>(w.shape[1]);
  for (std::size_t o = 0; o < out; ++o)
    for (std::size_t k = 0; k < cols; ++k) to[k * ld + to_col + o] = w.data[o * in + col0 + k];
}

std::vector<float> padded_copy(const NamedArray& v, std::size_t n) {
  std::vector<float> out(n, 0.0f);
  std::copy(v.data.begin(), v.data.end(), out.begin());
  return out;
}

void check_size(const char* what, std::size_t got, std::size_t want) {
  if (got != want)
    throw std::invalid_argument(std::string("ordering agent: ") + what + " has " + std::to_string(got) +
                                " values, expected " + std::to_string(want));
}

}  // namespace

OrderingAgent::Impl::Impl(const Model& m, bool use_avx2)
    : cfg(m.nets), job_norm(m.job_norm), cluster_norm(m.cluster_norm), avx2(use_avx2) {
  using kernel::padded;
  const auto& o = cfg.ordering;
  d = o.job_features, hid = o.hidden, hidp = padded(hid), emb = o.embed, embp = padded(emb);
  hh = o.head_hidden, hhp = padded(hh), om = o.order_message, omp = padded(om);
  const NamedArray& enc1 = m.weight("ordering.enc1.weight");
  const NamedArray& enc2 = m.weight("ordering.enc2.weight");
  const NamedArray& head1 = m.weight("ordering.head1.weight");
  const NamedArray& msg = m.weight("ordering.msg.weight");
  w1t.assign(d * hidp, 0.0f), put_transposed(enc1, 0, d, w1t, hidp, 0);
  b1 = padded_copy(m.weight("ordering.enc1.bias"), hidp);
  w2t.assign(hid * embp, 0.0f), put_transposed(enc2, 0, hid, w2t, embp, 0);
  b2 = padded_copy(m.weight("ordering.enc2.bias"), embp);
  wjt.assign(emb * (hhp + omp), 0.0f);
  put_transposed(head1, 0, emb, wjt, hhp + omp, 0);
  put_transposed(msg, 0, emb, wjt, hhp + omp, hhp);
  wst.assign(emb * hhp, 0.0f);
  put_transposed(head1, 0, emb, wst, hhp, 0);
  const std::size_t g = static_cast<std::size_t>(head1.shape[1]) - emb;
  wg.resize(hh * g);
  for (std::size_t r = 0; r < hh; ++r)
    std::copy_n(head1.data.begin() + static_cast<std::ptrdiff_t>(r * (emb + g) + emb), g,
                wg.begin() + static_cast<std::ptrdiff_t>(r * g));
  bh = m.weight("ordering.head1.bias").data;
  wc.resize(om * 2 * emb);
  for (std::size_t r = 0; r < om; ++r)
    std::copy_n(msg.data.begin() + static_cast<std::ptrdiff_t>(r * 3 * emb + emb), 2 * emb,
                wc.begin() + static_cast<std::ptrdiff_t>(r * 2 * emb));
  bm = m.weight("ordering.msg.bias").data;
  w3 = padded_copy(m.weight("ordering.head2.weight"), hhp);
  b3 = m.weight("ordering.head2.bias").data.at(0);
  if (o.preemptive) {
    wgate = m.weight("ordering.gate.weight").data;
    bgate = m.weight("ordering.gate.bias").data.at(0);
  }
}

OrderingAgent::OrderingAgent(const Model& m, Kernel k) : impl_(std::make_unique<Impl>(m, k == Kernel::kBest)) {}
OrderingAgent::~OrderingAgent() = default;
OrderingAgent::OrderingAgent(OrderingAgent&&) noexcept = default;
OrderingAgent& OrderingAgent::operator=(OrderingAgent&&) noexcept = default;

const NetConfig& OrderingAgent::config() const { return impl_->cfg; }

void OrderingAgent::Impl::run(std::span<const float> jobs, std::size_t n, std::span<const float> cluster,
                              std::span<const float> pmsg, std::vector<float>& scores,
                              std::vector<float>* messages, float* gate) const {
  if (gate) *gate = 0;
  check_size("job feature rows", jobs.size(), n * d);
  check_size("cluster summary", cluster.size(), cfg.ordering.cluster_features);
  if (!pmsg.empty()) check_size("placement message", pmsg.size(), cfg.placement.placement_message);
  scores.resize(n);
  if (messages) messages->resize(n * om);
  if (n == 0) return;
  constexpr std::size_t kBlock = 64;  // jobs per kernel call: the block's activations stay in L1
  thread_local std::vector<float> x, h, e, out;
  x.resize(kBlock * d), h.resize(kBlock * hidp), e.resize(n * embp);
  // pass 1 (embed, squeeze): mean and max of every embedding column
  std::vector<double> sum(emb, 0.0);
  std::vector<float> mx(emb, -std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t b = std::min(kBlock, n - i);
    for (std::size_t r = 0; r < b; ++r)
      for (std::size_t f = 0; f < d; ++f) x[r * d + f] = (jobs[(i + r) * d + f] - job_norm.mean[f]) * job_norm.scale[f];
    kernel::dense(x.data(), b, d, d, w1t.data(), hidp, b1.data(), h.data(), hidp, hidp, avx2);
    float* eb = e.data() + i * embp;
    kernel::dense(h.data(), b, hid, hidp, w2t.data(), embp, b2.data(), eb, embp, embp, avx2);
    for (std::size_t r = 0; r < b; ++r)
      for (std::size_t c = 0; c < emb; ++c) sum[c] += eb[r * embp + c], mx[c] = std::max(mx[c], eb[r * embp + c]);
  }
  // communicate: context, cluster summary and placement message, shared by every job
  std::vector<float> g;
  for (std::size_t c = 0; c < emb; ++c) g.push_back(static_cast<float>(sum[c] / static_cast<double>(n)));
  g.insert(g.end(), mx.begin(), mx.end());
  for (std::size_t f = 0; f < cluster.size(); ++f)
    g.push_back((cluster[f] - cluster_norm.mean[f]) * cluster_norm.scale[f]);
  if (gate && !wgate.empty()) {
    double s = bgate;  // [context; cluster], the first entries of g
    for (std::size_t k = 0; k < wgate.size(); ++k) s += static_cast<double>(wgate[k]) * g[k];
    *gate = static_cast<float>(1.0 / (1.0 + std::exp(-s)));
  }
  for (std::size_t k = 0; k < cfg.placement.placement_message; ++k) g.push_back(pmsg.empty() ? 0.0f : pmsg[k]);
  const std::size_t width = messages ? hhp + omp : hhp;
  std::vector<float> shared(width, 0.0f);
  for (std::size_t r = 0; r < hh; ++r) {
    double s = bh[r];
    for (std::size_t k = 0; k < g.size(); ++k) s += static_cast<double>(wg[r * g.size() + k]) * g[k];
    shared[r] = static_cast<float>(s);
  }
  if (messages)
    for (std::size_t r = 0; r < om; ++r) {
      double s = bm[r];
      for (std::size_t k = 0; k < 2 * emb; ++k) s += static_cast<double>(wc[r * 2 * emb + k]) * g[k];
      shared[hhp + r] = static_cast<float>(s);
    }
  // pass 2: each job's scoring head (and message) from its embedding
  out.resize(kBlock * width);
  for (std::size_t i = 0; i < n; i += kBlock) {
    const std::size_t b = std::min(kBlock, n - i);
    kernel::dense(e.data() + i * embp, b, emb, embp, messages ? wjt.data() : wst.data(), width, shared.data(),
                  out.data(), width, hhp, avx2);
    for (std::size_t r = 0; r < b; ++r) {
      float s = b3;
      for (std::size_t c = 0; c < hhp; ++c) s += out[r * width + c] * w3[c];
      scores[i + r] = s;
    }
    if (messages) {
      using Strided =
          Eigen::Map<Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0, Eigen::OuterStride<>>;
      Strided pre(out.data() + hhp, static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(om),
                  Eigen::OuterStride<>(static_cast<Eigen::Index>(width)));
      Eigen::Map<Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> to(
          messages->data() + i * om, static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(om));
      to = pre.tanh();
    }
  }
}

void OrderingAgent::score(std::span<const float> jobs, std::size_t num_jobs, std::span<const float> cluster,
                          std::span<const float> placement_msg, std::vector<float>& scores, float* gate) const {
  impl_->run(jobs, num_jobs, cluster, placement_msg, scores, nullptr, gate);
}

void OrderingAgent::score_with_messages(std::span<const float> jobs, std::size_t num_jobs,
                                        std::span<const float> cluster, std::span<const float> placement_msg,
                                        std::vector<float>& scores, std::vector<float>& messages,
                                        float* gate) const {
  impl_->run(jobs, num_jobs, cluster, placement_msg, scores, &messages, gate);
}

void OrderingAgent::softmax(std::span<const float> scores, std::vector<float>& probs) {
  probs.resize(scores.size());
  if (scores.empty()) return;
  const float mx = *std::max_element(scores.begin(), scores.end());
  double sum = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) sum += (probs[i] = std::exp(scores[i] - mx));
  for (float& p : probs) p = static_cast<float>(p / sum);
}

}  // namespace duet::learn
