#include "replay/job_explanation.h"

#include <sstream>

namespace duet::replay {

JobExplanation parse_scontrol_job(const std::string& out) {
  JobExplanation e;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    size_t b = line.find_first_not_of(' ');
    if (b != std::string::npos && line.compare(b, 14, "SystemComment=") == 0) {
      e.comment = line.substr(b + 14);
      while (!e.comment.empty() && e.comment.back() == ' ') e.comment.pop_back();
      continue;
    }
    std::istringstream w(line);
    for (std::string word; w >> word;) {
      if (word.rfind("JobId=", 0) == 0)
        e.found = true;
      else if (word.rfind("JobState=", 0) == 0)
        e.state = word.substr(9);
      else if (word.rfind("Priority=", 0) == 0)
        e.priority = word.substr(9);
      else if (word.rfind("NodeList=", 0) == 0)
        e.nodes = word.substr(9);
    }
  }
  return e;
}

JobExplanation parse_sacct_job(const std::string& out, const std::string& id) {
  JobExplanation e;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    // JobID|State|NodeList|SystemComment; the comment is last and kept whole.
    size_t a = line.find('|');
    if (a == std::string::npos || line.substr(0, a) != id) continue;
    size_t b = line.find('|', a + 1);
    size_t c = b == std::string::npos ? b : line.find('|', b + 1);
    if (c == std::string::npos) continue;
    e.found = true;
    e.state = line.substr(a + 1, b - a - 1);
    e.nodes = line.substr(b + 1, c - b - 1);
    e.comment = line.substr(c + 1);
    while (!e.comment.empty() && (e.comment.back() == ' ' || e.comment.back() == '\r')) e.comment.pop_back();
  }
  return e;
}

}  // namespace duet::replay
