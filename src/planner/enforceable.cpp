#include "kareus/planner/enforceable.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>
#include <vector>

#include "kareus/core/error.hpp"

namespace kareus::planner {

Enforceable parse_enforceable(const std::string& text) {
  if (text == "all") return Enforceable::kAll;
  if (text == "clocks") return Enforceable::kClocks;
  throw Error::invalid("command line", "--enforceable", text,
                       "all (every decision of the plan) or clocks (SM clocks only)");
}

const char* to_string(Enforceable e) {
  return e == Enforceable::kAll ? "all" : "clocks";
}

bool enforceable_by(Method method, Enforceable e) {
  if (e == Enforceable::kAll) return true;
  return method == Method::kMegatron || method == Method::kPerseus;
}

Method best_enforceable_method(const PlanResult& plan, Enforceable e,
                               std::optional<Seconds> deadline,
                               std::optional<Joules> energy_budget) {
  std::optional<Method> best;
  const IterationPoint* best_point = nullptr;
  std::vector<std::string> planned;
  for (const auto& [method, result] : plan.methods) {
    planned.emplace_back(to_string(method));
    if (!enforceable_by(method, e) || result.frontier.empty()) continue;
    const IterationPoint* point = nullptr;
    try {
      point = deadline        ? &select_by_deadline(result, *deadline)
              : energy_budget ? &select_by_energy_budget(result, *energy_budget)
                              : &select_max_throughput(result);
    } catch (const Error&) {
      continue;  // no point of this method meets the rule; another one may
    }
    // The rule's own measure first; a tie goes to the other one (Perseus at Megatron's clocks
    // runs exactly as fast for less energy).
    const auto key = [&](const IterationPoint* p) {
      const double time = p->time.value(), energy = p->energy.value();
      return deadline ? std::pair(energy, time) : std::pair(time, energy);
    };
    const bool better = !best_point || key(point) < key(best_point);
    if (better) {
      best = method;
      best_point = point;
    }
  }
  if (!best) {
    throw Error::invalid(
        "command line", "--enforceable", to_string(e),
        fmt::format("a method whose plans it can apply and that meets the selection rule; "
                    "planned: {} (only megatron and perseus run on clocks alone)",
                    fmt::join(planned, ", ")));
  }
  return *best;
}

}  // namespace kareus::planner
