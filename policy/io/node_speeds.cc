#include "policy/io/node_speeds.h"

#include <memory>

#include "policy/io/csv.h"
#include "policy/io/limits.h"
#include "policy/util/safe_file.h"

namespace duet {

NodeSpeeds parse_node_speeds(std::istream& in, const std::string& name) {
  CsvReader r(in, name);
  if (!r.next()) throw InputError(name, 1, 0, "empty file, expected a header with the columns node and speed");
  int node_col = -1, speed_col = -1;
  const auto& header = r.fields();
  for (size_t i = 0; i < header.size(); ++i) {
    int* col = header[i].text == "node" ? &node_col : header[i].text == "speed" ? &speed_col : nullptr;
    if (!col) continue;
    if (*col >= 0) r.fail(i, "column '" + header[i].text + "' named twice");
    *col = static_cast<int>(i);
  }
  if (node_col < 0 || speed_col < 0) r.fail(header.size(), "the header lacks a 'node' or 'speed' column");
  NodeSpeeds speeds;
  while (r.next()) {
    r.expect_fields(header.size(), header.size());
    const std::string& node = r.text(node_col, "node");
    if (node.empty()) r.fail(node_col, "empty node name");
    const double s = r.in_range(speed_col, "speed", kMinSpeed, kMaxSpeed);
    if (!speeds.emplace(node, s).second) r.fail(node_col, "node '" + node + "' listed twice");
  }
  if (speeds.empty()) throw InputError(name, r.line(), 0, "no nodes listed");
  return speeds;
}

NodeSpeeds read_node_speeds(const std::string& path) {
  std::unique_ptr<std::istream> in;
  try {
    in = std::make_unique<FileInput>(path, kMaxNodeSpeedsBytes, "node speeds CSV");
  } catch (const FileError& e) {
    throw InputError(path, 0, 0, e.reason());
  }
  return parse_node_speeds(*in, path);
}

}  // namespace duet
