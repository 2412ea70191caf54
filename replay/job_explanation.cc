#include "replay/job_explanation.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace duet::replay {
namespace {

using nlohmann::json;

// The job records of a Slurm --json answer ("jobs": [...]).
const json& jobs_of(const json& doc, const char* what) {
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array())
    throw std::runtime_error(std::string(what) + ": no \"jobs\" array in its JSON");
  return doc["jobs"];
}

json parse(const std::string& out, const char* what) {
  try {
    return json::parse(out);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string(what) + ": output is not JSON (" + e.what() + ")");
  }
}

std::optional<std::uint64_t> number(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_unsigned()) return std::nullopt;
  return j[key].get<std::uint64_t>();
}

std::string text(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

bool is_job(const JobIdSpec& id, std::optional<std::uint64_t> job, std::optional<std::uint64_t> array_job,
            std::optional<std::uint64_t> array_task) {
  if (!id.task) return job == id.job;
  return array_job == id.job && array_task == id.task;
}

}  // namespace

std::optional<JobIdSpec> parse_job_id(const std::string& id) {
  JobIdSpec s;
  const size_t us = id.find('_');
  auto digits = [](const std::string& t, std::uint64_t* out) {
    if (t.empty() || t.size() > 12) return false;
    *out = 0;
    for (char c : t) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      *out = *out * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return true;
  };
  if (!digits(id.substr(0, us), &s.job)) return std::nullopt;
  if (us != std::string::npos) {
    std::uint64_t t = 0;
    if (!digits(id.substr(us + 1), &t)) return std::nullopt;
    s.task = t;
  }
  return s;
}

JobExplanation parse_squeue_json(const std::string& out, const JobIdSpec& id) {
  const json doc = parse(out, "squeue --json");
  JobExplanation e;
  for (const json& j : jobs_of(doc, "squeue --json")) {
    if (!j.is_object()) continue;
    if (!is_job(id, number(j, "job_id"), number(j, "array_job_id"), number(j, "array_task_id"))) continue;
    e.found = true;
    e.state = text(j, "job_state");
    if (auto p = number(j, "priority")) e.priority = std::to_string(*p);
    e.nodes = text(j, "nodes");
    e.comment = text(j, "system_comment");
    return e;  // slurmctld holds one job per id
  }
  return e;
}

JobExplanation parse_sacct_json(const std::string& out, const JobIdSpec& id) {
  const json doc = parse(out, "sacct --json");
  JobExplanation e;
  std::uint64_t latest = 0;
  for (const json& j : jobs_of(doc, "sacct --json")) {
    if (!j.is_object()) continue;
    const json none = json::object();
    const json& array = j.contains("array") ? j["array"] : none;
    if (!is_job(id, number(j, "job_id"), number(array, "job_id"), number(array, "task_id"))) continue;
    const json& time = j.contains("time") ? j["time"] : none;
    const std::uint64_t submitted = number(time, "submission").value_or(0);
    if (e.found && submitted < latest) continue;
    latest = submitted;
    e.found = true;
    e.state = text(j.contains("state") ? j["state"] : none, "current");
    e.nodes = text(j, "nodes");
    e.comment = text(j.contains("comment") ? j["comment"] : none, "system");
  }
  return e;
}

}  // namespace duet::replay
