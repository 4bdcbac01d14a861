// The native task runner: task 0 on the calling thread, every other task on a thread of its own
// (POSIX threads, started for the call and joined before it returns). Core's tasks are few and
// long (a share of an NDJSON text's lines), so a thread per task costs tens of microseconds
// against milliseconds of work, and nothing outlives the call. A thread that cannot be started
// (the process is out of threads or memory) leaves its task to the calling thread.
#include <pthread.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "quire/platform.h"

namespace quire {
namespace {

struct task {
  const std::function<void(size_t)> *work = nullptr;
  size_t index = 0;
};

void *run_task(void *arg) {
  const task *t = static_cast<const task *>(arg);
  (*t->work)(t->index);
  return nullptr;
}

class thread_per_task final : public task_runner {
 public:
  unsigned concurrency() const noexcept override {
    static const unsigned n = std::max(1u, std::thread::hardware_concurrency());
    return n;
  }

  void run(size_t count, const std::function<void(size_t)> &work) const override {
    if (count == 0) return;
    std::vector<task> tasks(count);
    std::vector<pthread_t> threads(count);
    std::vector<bool> started(count, false);
    for (size_t i = 1; i < count; ++i) {
      tasks[i] = {&work, i};
      started[i] = pthread_create(&threads[i], nullptr, run_task, &tasks[i]) == 0;
    }
    work(0);
    for (size_t i = 1; i < count; ++i) {
      if (started[i]) pthread_join(threads[i], nullptr);
      else work(i);
    }
  }
};

}  // namespace

const task_runner &default_task_runner() {
  static const thread_per_task runner;
  return runner;
}

}  // namespace quire
