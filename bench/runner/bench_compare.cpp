// Compares readings case by case (quire-bench compare, and the README's main job).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "quire/bench.h"
#include "quire/json.h"

namespace quire::bench {
namespace {

struct case_row {
  double median = 0, p99 = 0, alloc_calls = -1, peak = -1, input_bytes = 0, generated_bytes = 0;
  bool opaque = false;
  std::string checksum, error, peer, mirrors;
};

struct parsed_reading {
  std::string label, target;
  std::map<std::string, case_row> cases;
  std::vector<std::pair<std::string, case_row>> peers;  // other libraries, measured beside quire
};

double number_at(const json::value &v, std::string_view pointer) {
  auto found = v.at_pointer(pointer);
  if (!found || !found->has_value()) return 0;
  auto d = (*found)->get_double();
  return d ? d.value() : 0;
}

std::string string_at(const json::value &v, std::string_view pointer) {
  auto found = v.at_pointer(pointer);
  if (!found || !found->has_value()) return {};
  auto s = (*found)->get_string();
  return s ? std::string(s.value()) : std::string();
}

std::string duration(double ns) {
  char buf[32];
  if (ns <= 0) return "-";
  if (ns < 1e3) std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (ns < 1e6) std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else if (ns < 1e9) std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
  return buf;
}

std::string bytes(double b) {
  char buf[32];
  if (b < 0) return "-";
  if (b < 1024) std::snprintf(buf, sizeof buf, "%.0f B", b);
  else if (b < 1048576) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024);
  else std::snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576);
  return buf;
}

std::string pad(std::string s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

}  // namespace

result<comparison> compare_readings(const std::vector<labelled_reading> &readings) {
  std::vector<parsed_reading> parsed;
  std::vector<std::string> order;
  for (const auto &r : readings) {
    auto doc = json::parse(r.text);
    if (!doc) {
      auto e = doc.error();
      e.message = r.label + ": " + e.message;
      return e;
    }
    auto root = doc->root();
    auto cases = root.at_pointer("/cases");
    if (!cases || !cases->has_value() || (*cases)->type() != json::kind::array) {
      return quire::error(error_code::INVALID_JSON, r.label + " is not a reading: it has no \"cases\" array");
    }
    parsed_reading p;
    p.label = r.label;
    p.target = string_at(root, "/target");
    for (auto c : (*cases)->get_array().value()) {
      std::string name = string_at(c, "/name");
      case_row row;
      row.median = number_at(c, "/time_ns/median");
      row.p99 = number_at(c, "/time_ns/p99");
      row.input_bytes = number_at(c, "/input_bytes");
      row.generated_bytes = number_at(c, "/generated_bytes");
      if (auto a = c.at_pointer("/alloc"); a && a->has_value()) {
        row.alloc_calls = number_at(c, "/alloc/calls_per_op");
        row.peak = number_at(c, "/alloc/peak_bytes");
      }
      if (auto o = c.at_pointer("/opaque_payload"); o && o->has_value()) {
        auto b = (*o)->get_bool();
        row.opaque = b && b.value();
      }
      row.checksum = string_at(c, "/checksum");
      row.error = string_at(c, "/error");
      row.peer = string_at(c, "/peer");
      row.mirrors = string_at(c, "/mirrors");
      if (!row.peer.empty()) {
        p.peers.emplace_back(name, row);
        continue;
      }
      if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
      p.cases[name] = row;
    }
    parsed.push_back(std::move(p));
  }

  comparison out;
  size_t name_width = 12;
  for (const auto &n : order) name_width = std::max(name_width, n.size());
  std::string &t = out.table;
  t += pad("case", name_width + 2);
  for (size_t i = 0; i < parsed.size(); ++i) t += pad(parsed[i].label, i ? 31 : 22);
  t += "allocs/op     peak (first reading)\n";
  t += pad("", name_width + 2);
  for (size_t i = 0; i < parsed.size(); ++i) t += i ? "    median        p99    ratio " : "    median        p99 ";
  t += "\n";

  std::vector<std::string> missing, differ, failed, budgets;
  for (const auto &name : order) {
    t += pad(name, name_width + 2);
    const case_row *first = nullptr;
    std::string checksum;
    bool mismatch = false;
    for (size_t i = 0; i < parsed.size(); ++i) {
      auto it = parsed[i].cases.find(name);
      if (it == parsed[i].cases.end()) {
        t += pad("(missing)", i ? 31 : 22);
        missing.push_back(name + " in " + parsed[i].label);
        continue;
      }
      const case_row &row = it->second;
      if (!row.error.empty()) failed.push_back(name + " in " + parsed[i].label + ": " + row.error);
      if (!first) first = &row;
      if (checksum.empty()) checksum = row.checksum;
      else if (!row.checksum.empty() && row.checksum != checksum) mismatch = true;
      t += pad(duration(row.median), 10, true) + pad(duration(row.p99), 11, true);
      if (i) {
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, "%.2fx", first && first->median > 0 ? row.median / first->median : 0.0);
        t += pad(ratio, 9, true) + " ";
      } else {
        t += " ";
      }
      // A case that generates its data from a parameter (the wide write's row count) is held to
      // the data it made: its input's few bytes would put any peak over budget.
      double limit = row.opaque ? 3 : 20;
      const bool generated = row.generated_bytes > 0;
      const double base = generated ? row.generated_bytes : row.input_bytes;
      if (row.peak > 0 && base > 0 && row.peak > limit * base) {
        char line[256];
        std::snprintf(line, sizeof line, "%s in %s: peak %s is %.1fx the %s (budget %.0fx)", name.c_str(),
                      parsed[i].label.c_str(), bytes(row.peak).c_str(), row.peak / base,
                      generated ? "data it generated" : "input", limit);
        budgets.push_back(line);
      }
    }
    if (first) {
      char allocs[32];
      std::snprintf(allocs, sizeof allocs, "%.0f", first->alloc_calls);
      t += pad(first->alloc_calls < 0 ? "-" : allocs, 10, true) + "  " + pad(bytes(first->peak), 10, true);
    }
    if (mismatch) {
      t += "  CHECKSUM DIFFERS";
      differ.push_back(name);
    }
    t += "\n";
  }

  for (const auto &p : parsed) {
    if (p.peers.empty()) continue;
    t += "\nPeers in " + p.label + " (same input bytes, same method; ratio = peer median / quire median):\n";
    for (const auto &[name, row] : p.peers) {
      auto mirrored = p.cases.find(row.mirrors);
      char ratio[32] = "-";
      if (mirrored != p.cases.end() && mirrored->second.median > 0) {
        std::snprintf(ratio, sizeof ratio, "%.2fx", row.median / mirrored->second.median);
      }
      t += "  " + pad(name, name_width + 2) + pad(duration(row.median), 10, true) + pad(duration(row.p99), 11, true) +
           pad(ratio, 9, true) + "  vs " + row.mirrors + "  [" + row.peer + "]\n";
    }
  }
  if (!missing.empty()) {
    t += "\nMissing (" + std::to_string(missing.size()) + "):\n";
    for (const auto &m : missing) t += "  " + m + "\n";
  }
  if (!failed.empty()) {
    t += "\nFailed cases:\n";
    for (const auto &f : failed) t += "  " + f + "\n";
  }
  t += "\nBudgets (advisory): peak memory of one call under 20x the input, or the data a case generated "
       "(3x for opaque payloads)\n";
  if (budgets.empty()) t += "  all within budget\n";
  for (const auto &b : budgets) t += "  over: " + b + "\n";
  if (parsed.size() > 1) {
    // wasm / native: the median of the per-case median ratios, by reading.
    for (size_t i = 1; i < parsed.size(); ++i) {
      std::vector<double> ratios;
      for (const auto &name : order) {
        auto a = parsed[0].cases.find(name), b = parsed[i].cases.find(name);
        if (a != parsed[0].cases.end() && b != parsed[i].cases.end() && a->second.median > 0 && b->second.median > 0) {
          ratios.push_back(b->second.median / a->second.median);
        }
      }
      if (ratios.empty()) continue;
      std::sort(ratios.begin(), ratios.end());
      char line[200];
      std::snprintf(line, sizeof line, "  %s / %s median ratio over %zu cases: %.2fx (min %.2fx, max %.2fx)\n",
                    parsed[i].label.c_str(), parsed[0].label.c_str(), ratios.size(), ratios[ratios.size() / 2],
                    ratios.front(), ratios.back());
      t += line;
    }
  }
  if (!differ.empty()) {
    t += "\nERROR: checksums differ between readings for " + std::to_string(differ.size()) +
         " case(s): the targets computed different results.\n";
    for (const auto &d : differ) t += "  " + d + "\n";
  }
  out.checksums_differ = !differ.empty();
  out.missing = missing.size();
  return out;
}

}  // namespace quire::bench
