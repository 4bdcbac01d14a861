// `quire-bench`: the native benchmark runner, the comparison of readings and the native scaling
// gates. Its own executable (not a `quire` subcommand): the shipped CLI carries no benchmark case.
//   quire-bench [--quick] [--filter TEXT[,TEXT]] [--out FILE] [--large] [--seconds S] [--threads N] [--list]
//               [--scaling]
//   quire-bench compare A.json [B.json ...]
#include <malloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "quire/bench.h"
#include "quire/json.h"
#include "quire/platform.h"
#include "quire/version.h"
#include "quire/view.h"

namespace quire::bench_cli {
namespace {

// Exit codes, as the `quire` CLI's: 0 success, 1 bad input (a failed case, differing checksums), 2 bad usage.
constexpr int EXIT_OK = 0;
constexpr int EXIT_BAD_INPUT = 1;
constexpr int EXIT_USAGE = 2;

// The words after the command, with the `quire` CLI's option syntax (--name VALUE or --name=VALUE).
class arguments {
 public:
  explicit arguments(std::vector<std::string> words) : words_(std::move(words)) {}
  bool flag(std::string_view name) {
    for (auto it = words_.begin(); it != words_.end(); ++it) {
      if (*it == name) {
        words_.erase(it);
        return true;
      }
    }
    return false;
  }
  std::optional<std::string> option(std::string_view name) {
    std::optional<std::string> found;
    for (size_t i = 0; i < words_.size();) {
      const std::string &w = words_[i];
      if (w == name) {
        if (i + 1 >= words_.size()) {
          error_ = std::string(name) + " needs a value";
          words_.erase(words_.begin() + static_cast<std::ptrdiff_t>(i));
          continue;
        }
        found = words_[i + 1];
        words_.erase(words_.begin() + static_cast<std::ptrdiff_t>(i),
                     words_.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      } else if (w.size() > name.size() && w.compare(0, name.size(), name) == 0 && w[name.size()] == '=') {
        found = w.substr(name.size() + 1);
        words_.erase(words_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    return found;
  }
  // What is left once options are taken; an unknown --option left over is a usage error.
  std::vector<std::string> positional() {
    std::vector<std::string> out;
    for (const auto &w : words_) {
      if (w.size() > 1 && w[0] == '-') {
        if (error_.empty()) error_ = "unknown option " + w;
      } else {
        out.push_back(w);
      }
    }
    return out;
  }
  const std::string &error() const { return error_; }

 private:
  std::vector<std::string> words_;
  std::string error_;
};

// `command` is "compare", or empty for the runner itself.
int usage_error(std::string_view command, std::string_view message) {
  std::fprintf(stderr, "quire-bench%s%.*s: %.*s\nTry 'quire-bench --help'.\n", command.empty() ? "" : " ",
               static_cast<int>(command.size()), command.data(), static_cast<int>(message.size()), message.data());
  return EXIT_USAGE;
}

void print_error(std::string_view file, const quire::error &e) {
  std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(file.size()), file.data(), e.describe().c_str());
}

std::string run_command(const std::string &command) {
  std::string out;
  if (FILE *p = ::popen(command.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

// The shipped `quire` CLI, whose start-up and size the reading records (not this runner's: it carries
// every case): QUIRE_CLI, else the path CMake built it at, else nothing.
std::string shipped_cli() {
  if (const char *env = std::getenv("QUIRE_CLI"); env && *env) return env;
#ifdef QUIRE_CLI_PATH
  if (std::ifstream(QUIRE_CLI_PATH).good()) return QUIRE_CLI_PATH;
#endif
  return {};
}

// Median wall time of `quire version` in a fresh process: what starting the tool costs.
double process_start_ms(const std::string &exe) {
  std::vector<double> times;
  for (int i = 0; i < 7; ++i) {
    auto started = std::chrono::steady_clock::now();
    run_command("'" + exe + "' version >/dev/null 2>&1");
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::string quoted(std::string_view s) {
  std::string out;
  json::append_quoted(out, s);
  return out;
}

// The 1-minute load average, -1 when the system gives none.
double load_now() {
  double load[1] = {-1};
  return ::getloadavg(load, 1) == 1 ? std::round(load[0] * 100) / 100 : -1;
}

// `started` and `load_start` are taken before the cases run, the rest after them.
std::string meta_json(const std::string &exe, std::time_t started_t, double load_start) {
  // Without the CLI (a build of the benchmarks alone) there is no artifact to describe: zeros.
  auto v = quire::version();
  struct utsname u {};
  ::uname(&u);
  std::string commit = run_command("git rev-parse HEAD 2>/dev/null");
  bool dirty = !run_command("git status --porcelain --untracked-files=no 2>/dev/null").empty();
  long long size = 0;
  std::string gz;
  double start_ms = 0;
  if (!exe.empty()) {
    std::ifstream bin(exe, std::ios::binary | std::ios::ate);
    size = bin ? static_cast<long long>(bin.tellg()) : 0;
    gz = run_command("gzip -9 -c '" + exe + "' | wc -c");
    start_ms = process_start_ms(exe);
  }
  char started[32];
  std::strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&started_t));
  std::ostringstream m;
  m << "{\"schema\":\"quire-reading/1\",\"target\":\"native\",\"runtime\":{\"name\":" << quoted(v.compiler)
    << ",\"version\":" << quoted(v.compiler)
    << "},\"build\":{\"commit\":" << quoted(commit.empty() ? "unknown" : commit)
    << ",\"dirty\":" << (dirty ? "true" : "false") << ",\"compiler\":" << quoted(v.compiler)
    << ",\"flags\":" << quoted(v.flags) << ",\"simd\":" << quoted(v.simd)
    << "},\"machine\":{\"cpu\":" << quoted(cpu_model()) << ",\"logical_cores\":" << ::sysconf(_SC_NPROCESSORS_ONLN)
    << ",\"os\":" << quoted(std::string(u.sysname) + " " + u.release)
    << ",\"threads\":" << (bench::case_threads() ? bench::case_threads() : default_task_runner().concurrency())
    << ",\"load_average\":{\"start\":" << load_start << ",\"end\":" << load_now() << "}"
    << "},\"started_at\":" << quoted(started) << ",\"startup\":{\"process_start_ms\":" << start_ms
    << ",\"artifact_bytes\":" << size << ",\"artifact_gzip_bytes\":" << (gz.empty() ? "0" : gz) << "}}";
  return m.str();
}

// Large blocks stay with the process between calls, as in a long-running service: by default
// glibc maps every block above its (dynamic, at most 32 MiB) threshold afresh and trims freed heap,
// so each call faults in new zeroed pages — in this project's virtual machines about 10 us a page,
// which made a 4x input cost 15-25x. wasm never returns memory, so its readings need no such step.
// Set QUIRE_BENCH_GLIBC_DEFAULTS=1 to measure with glibc's defaults.
void keep_freed_memory() {
  if (std::getenv("QUIRE_BENCH_GLIBC_DEFAULTS")) return;
  ::mallopt(M_MMAP_THRESHOLD, 1 << 30);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

int run_bench(arguments &args) {
  keep_freed_memory();
  bench::run_options opts;
  opts.quick = args.flag("--quick");
  opts.large = args.flag("--large");
  bool scaling = args.flag("--scaling");
  bool list = args.flag("--list");
  auto filter = args.option("--filter");
  auto out = args.option("--out");
  auto seconds = args.option("--seconds");
  auto threads = args.option("--threads");
  auto rest = args.positional();
  if (!args.error().empty() || !rest.empty())
    return usage_error("", args.error().empty() ? "takes no positional arguments" : args.error());
  if (filter) opts.filter = *filter;
  if (seconds) opts.seconds_per_case = std::atof(seconds->c_str());
  if (threads) {
    unsigned n = 0;
    auto [p, ec] = std::from_chars(threads->data(), threads->data() + threads->size(), n);
    if (ec != std::errc() || p != threads->data() + threads->size() || n > view::run_options::MAX_THREADS)
      return usage_error("", "--threads takes a whole number from 0 to 256");
    bench::set_case_threads(n);
  }

  if (list) {
    for (const auto &c : bench::all_cases()) std::printf("%s%s\n", c.name().c_str(), c.large ? " (large)" : "");
    for (const auto &g : bench::all_gates()) std::printf("gate %s\n", g.name.c_str());
    return EXIT_OK;
  }
  if (scaling) {
    auto results = bench::run_gates(
        opts.filter, [](const std::string &name) { std::fprintf(stderr, "gate %s ...\n", name.c_str()); });
    bool ok = true;
    std::printf("%-28s %12s %12s %8s  %-6s %12s %12s %8s  %s\n", "gate (native)", "base", "4x", "ratio", "",
                "twin base", "twin 4x", "ratio", "self-check");
    for (const auto &r : results) {
      if (!r.error.empty()) {
        std::printf("%-28s ERROR %s\n", r.name.c_str(), r.error.c_str());
        ok = false;
        continue;
      }
      std::printf("%-28s %10.2fms %10.2fms %7.2fx  %-6s %10.2fms %10.2fms %7.2fx  %s (bounds %.1fx-%.1fx)\n",
                  r.name.c_str(), r.base_ns / 1e6, r.four_ns / 1e6, r.ratio, r.passed ? "pass" : "FAIL",
                  r.twin_base_ns / 1e6, r.twin_four_ns / 1e6, r.twin_ratio,
                  r.twin_failed ? "fails as designed" : "DID NOT FAIL (fixture too small)", r.floor, r.ceiling);
      ok = ok && r.passed && r.twin_failed;
    }
    std::printf(
        "%zu gates: %s\n", results.size(),
        ok ? "all within their bounds (1.5x-8x linear, under 2.5x sublinear), every twin above the bound" : "FAILED");
    return ok ? EXIT_OK : EXIT_BAD_INPUT;
  }

  const std::time_t started = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  const double load_start = load_now();
  opts.progress = [](size_t i, size_t n, const std::string &name) {
    std::fprintf(stderr, "\r[%zu/%zu] %-60s", i + 1, n, name.c_str());
    std::fflush(stderr);
  };
  auto cases = bench::run_cases(opts);
  std::fprintf(stderr, "\r%-80s\r", "");
  std::string reading = bench::reading_json(meta_json(shipped_cli(), started, load_start), cases);
  if (out) {
    std::string tmp = *out + ".tmp-" + std::to_string(::getpid());
    {
      std::ofstream f(tmp, std::ios::binary);
      f << reading;
      if (!f) return usage_error("", "cannot write " + *out);
    }
    std::rename(tmp.c_str(), out->c_str());
    std::fprintf(stderr, "wrote %s (%zu cases)\n", out->c_str(), cases.size());
  } else {
    std::fputs(reading.c_str(), stdout);
  }
  int failed = 0;
  for (const auto &c : cases) {
    if (!c.error.empty()) {
      std::fprintf(stderr, "case %s failed: %s\n", c.name.c_str(), c.error.c_str());
      ++failed;
    }
  }
  return failed ? EXIT_BAD_INPUT : EXIT_OK;
}

int run_compare(arguments &args) {
  auto files = args.positional();
  if (!args.error().empty()) return usage_error("compare", args.error());
  if (files.empty()) return usage_error("compare", "needs at least one reading (A.json [B.json ...])");
  std::vector<bench::labelled_reading> readings;
  for (const auto &f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      print_error(f, quire::error(error_code::FILE_NOT_FOUND, "cannot open " + f));
      return EXIT_BAD_INPUT;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    readings.push_back({f, ss.str()});
  }
  // Label each reading by its target unless two share one.
  for (auto &r : readings) {
    auto doc = json::parse(r.text);
    if (!doc) continue;
    auto target = doc->root().at_pointer("/target");
    if (target && target->has_value()) {
      auto s = (*target)->get_string();
      if (s) r.label = std::string(s.value());
    }
  }
  for (size_t i = 0; i < readings.size(); ++i) {
    for (size_t j = 0; j < readings.size(); ++j) {
      if (i != j && readings[i].label == readings[j].label) readings[i].label = files[i];
    }
  }
  auto result = bench::compare_readings(readings);
  if (!result) {
    print_error("compare", result.error());
    return EXIT_BAD_INPUT;
  }
  std::fputs(result->table.c_str(), stdout);
  return result->checksums_differ ? EXIT_BAD_INPUT : EXIT_OK;
}

constexpr const char *HELP =
    "quire-bench — quire's benchmark cases natively, the comparison of readings, the scaling gates.\n\n"
    "Usage:\n"
    "  quire-bench [--quick] [--filter TEXT[,TEXT]] [--out FILE] [--large] [--seconds S] [--threads N] [--list]\n"
    "              [--scaling]\n"
    "        Run the benchmark cases natively and write a reading (JSON); --scaling runs the scaling gates.\n"
    "  quire-bench compare A.json [B.json ...]\n"
    "        Compare readings case by case; exit 1 when checksums differ between them.\n"
    "  quire-bench --help\n"
    "        Print this help.\n\n"
    "Exit codes: 0 success, 1 a case failed or checksums differ, 2 bad usage.\n";

}  // namespace
}  // namespace quire::bench_cli

int main(int argc, char **argv) {
  using namespace quire::bench_cli;
  std::vector<std::string> words(argv + 1, argv + argc);
  if (!words.empty() && (words[0] == "--help" || words[0] == "-h" || words[0] == "help")) {
    std::fputs(HELP, stdout);
    return EXIT_OK;
  }
  if (!words.empty() && words[0] == "compare") {
    arguments args({words.begin() + 1, words.end()});
    return run_compare(args);
  }
  // `quire-bench bench ...` reads as `quire-bench ...` (the old `quire bench` spelling).
  if (!words.empty() && words[0] == "bench") words.erase(words.begin());
  arguments args(std::move(words));
  return run_bench(args);
}
